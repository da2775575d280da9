/**
 * Splits `git cat-file --batch` output ("<sha> <type> <size>\n<content>\n" per object) into one
 * entry per request, null where git answered "<name> missing".
 */
export function splitCatFileBatch(out: string): Array<string | null> {
  const buf = Buffer.from(out, 'utf8');
  const texts: Array<string | null> = [];
  let pos = 0;
  while (pos < buf.length) {
    const eol = buf.indexOf(0x0a, pos);
    if (eol < 0) break;
    const header = buf.subarray(pos, eol).toString('utf8').split(' ');
    pos = eol + 1;
    if (header.length < 3) {
      texts.push(null);
      continue;
    }
    const size = Number(header[2]);
    texts.push(buf.subarray(pos, pos + size).toString('utf8'));
    pos += size + 1;
  }
  return texts;
}
