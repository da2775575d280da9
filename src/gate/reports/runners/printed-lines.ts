/**
 * A runner's printed output as lines for the readers in this folder: colours removed, each line
 * trimmed at its end and cut at a bounded length, so that no reader's pattern ever runs over more
 * than one short line (a test can print a megabyte on one line). Pure.
 */

// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI colour codes start with ESC
const ANSI = /\u001b\[[0-9;?]*[A-Za-z]/g;
/** Longer than any name or summary a runner prints; what a test prints past it is not read. */
export const MAX_LINE = 2000;

export function printedLines(output: string): string[] {
  return output.split(/\r?\n/).map((line) => (line.length > MAX_LINE ? line.slice(0, MAX_LINE) : line).replace(ANSI, '').trimEnd());
}

/** The number before a word in a runner's count list (`3 passed`), or 0. */
export function countOf(parts: ReadonlyMap<string, number>, ...words: string[]): number {
  return words.reduce((sum, word) => sum + (parts.get(word) ?? 0), 0);
}

/** `3 failed, 2 passed, 1 skipped` (any separator given) as counts by word; null when a part is not `N word`. */
export function countList(list: string, separator: string): Map<string, number> | null {
  const counts = new Map<string, number>();
  for (const part of list.split(separator)) {
    const match = /^(\d+) ([a-z][a-z ]*)$/.exec(part.trim());
    if (!match) return null;
    const word = (match[2] as string).trim();
    counts.set(word, (counts.get(word) ?? 0) + Number(match[1]));
  }
  return counts;
}
