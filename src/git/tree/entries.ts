/** One entry of a tree object as git stores it. */
export interface StoredTreeEntry {
  mode: string;
  name: string;
  sha: string;
}

/** The entries of a tree object's raw content ("<mode> <name>\0<20-byte id>" each). */
export function parseTree(content: Buffer): StoredTreeEntry[] {
  const entries: StoredTreeEntry[] = [];
  let pos = 0;
  while (pos < content.length) {
    const space = content.indexOf(0x20, pos);
    const nul = content.indexOf(0x00, space + 1);
    if (space < 0 || nul < 0 || nul + 21 > content.length) throw new Error('not a tree object');
    entries.push({
      mode: content.subarray(pos, space).toString('latin1'),
      name: content.subarray(space + 1, nul).toString('utf8'),
      sha: content.subarray(nul + 1, nul + 21).toString('hex'),
    });
    pos = nul + 21;
  }
  return entries;
}
