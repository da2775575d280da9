import { gitBytes } from './git.js';

/** A commit as its object holds it: no format string of git's stands between its bytes and these fields. */
export interface RawCommit {
  commit: string;
  parents: string[];
  /** The committer's date, strict ISO 8601 in the committer's zone (as `%cI` prints it). */
  date: string;
  message: string;
}

/**
 * The first-parent commits of `rev` (a commit or a range `a..b`), newest first. The ids come
 * from `rev-list` (hex, one a line) and each commit's object from `cat-file --batch`, which
 * frames every object by its size in bytes: a message can hold any byte (a field separator, a
 * NUL, a line that mimics the next commit) and still not spill into another field or commit.
 */
export async function readFirstParentCommits(repo: string, rev: string): Promise<RawCommit[]> {
  const ids = (await gitBytes(['rev-list', '--first-parent', rev, '--'], { cwd: repo }))
    .toString('latin1')
    .split('\n')
    .filter((line) => /^[0-9a-f]{40,64}$/.test(line));
  if (ids.length === 0) return [];
  const out = await gitBytes(['cat-file', '--batch'], { cwd: repo, input: `${ids.join('\n')}\n` });
  const commits: RawCommit[] = [];
  let pos = 0;
  for (const id of ids) {
    const eol = out.indexOf(0x0a, pos);
    const header = out.subarray(pos, eol).toString('latin1').split(' ');
    const size = Number(header[2]);
    if (eol < 0 || header[0] !== id || header[1] !== 'commit' || !Number.isSafeInteger(size))
      throw new Error(`cat-file answered ${JSON.stringify(header.join(' '))} for ${id}`);
    commits.push(parseCommitObject(id, out.subarray(eol + 1, eol + 1 + size)));
    pos = eol + 1 + size + 1;
  }
  return commits;
}

function parseCommitObject(id: string, body: Buffer): RawCommit {
  const end = body.indexOf('\n\n');
  const head = body.subarray(0, end < 0 ? body.length : end).toString('utf8');
  const message = end < 0 ? '' : body.subarray(end + 2).toString('utf8');
  const parents: string[] = [];
  let date = '';
  for (const line of head.split('\n')) {
    // A continuation line (a signature's) starts with a space and is no header of its own.
    if (line.startsWith('parent ')) parents.push(line.slice(7).trim());
    else if (line.startsWith('committer ')) date = isoDate(line);
  }
  return { commit: id, parents, date, message };
}

/** `committer Name <mail> 1700000000 +0130` → `2023-11-14T23:43:20+01:30`. */
function isoDate(line: string): string {
  const match = / (\d+) ([+-])(\d\d)(\d\d)$/.exec(line);
  if (!match) return '';
  const offset = (match[2] === '-' ? -1 : 1) * (Number(match[3]) * 60 + Number(match[4]));
  const local = new Date((Number(match[1]) + offset * 60) * 1000).toISOString().slice(0, 19);
  return `${local}${match[2]}${match[3]}:${match[4]}`;
}
