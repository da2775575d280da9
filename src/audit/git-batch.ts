import { git } from '../git/git.js';

/**
 * The object name of each revision expression (`<commit>:world.yaml`, `<commit>^{tree}`), or
 * null when it names nothing; one `git cat-file` for all of them.
 */
export async function batchObjectNames(repo: string, revisions: readonly string[]): Promise<Array<string | null>> {
  if (revisions.length === 0) return [];
  const out = (await git(['cat-file', '--batch-check=%(objectname)'], { cwd: repo, input: `${revisions.join('\n')}\n` })).stdout;
  return out
    .split('\n')
    .slice(0, revisions.length)
    .map((line) => (/^[0-9a-f]{40,64}$/.test(line) ? line : null));
}

/** The text of each blob (null when missing), from one `git cat-file --batch`. */
export async function batchBlobs(repo: string, names: readonly string[]): Promise<Array<string | null>> {
  if (names.length === 0) return [];
  const out = await git(['cat-file', '--batch'], { cwd: repo, input: `${names.join('\n')}\n` });
  const buf = Buffer.from(out.stdout, 'utf8');
  const texts: Array<string | null> = [];
  let pos = 0;
  while (pos < buf.length && texts.length < names.length) {
    const eol = buf.indexOf(0x0a, pos);
    if (eol < 0) break;
    const header = buf.subarray(pos, eol).toString('utf8').split(' ');
    pos = eol + 1;
    if (header.length < 3 || header[1] === 'missing' || header[1] === 'ambiguous') {
      texts.push(null);
      continue;
    }
    const size = Number(header[2]);
    // Bytes that were not UTF-8 were re-encoded on the way and shifted the offsets: trust nothing after.
    if (buf[pos + size] !== 0x0a) break;
    texts.push(buf.subarray(pos, pos + size).toString('utf8'));
    pos += size + 1;
  }
  while (texts.length < names.length) texts.push(null);
  return texts;
}
