import { stripVTControlCharacters } from 'node:util';

/**
 * The one place Genesis handles terminal escapes in text it did not write: an agent's log, a
 * candidate's diff, the output of the code under test. Readers that parse such text strip the
 * escapes (colour codes around a runner's counts); everything shown to a person renders them
 * visibly, since a cursor movement or an erase in a diff can hide a line from a reviewer.
 */

/** The text without its escape sequences: what a reader of test-runner output parses. */
export function stripTerminalEscapes(text: string): string {
  return stripVTControlCharacters(text);
}

// Every C0 control but tab and newline, DEL, every C1 control (0x9b alone starts a sequence on
// many terminals), and the bidirectional overrides and isolates that reorder what is displayed.
// One character class, so the scan is linear in the text.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

const ANY_CONTROL = new RegExp(CONTROL.source);

function visible(char: string): string {
  const code = char.charCodeAt(0);
  // The Control Pictures block has one glyph per C0 control (ESC is ␛, CR ␍) and one for DEL.
  if (code < 0x20) return String.fromCharCode(0x2400 + code);
  if (code === 0x7f) return '\u2421';
  return `<U+${code.toString(16).toUpperCase().padStart(4, '0')}>`;
}

/** Whether `text` holds a character {@link showControls} would render. */
export function hasControls(text: string): boolean {
  return ANY_CONTROL.test(text);
}

/**
 * `text` as a terminal may print it: each control character as a visible glyph (ESC as ␛, so
 * `␛[2K` reads as the erase it is; CR as ␍), each bidirectional override as `<U+202E>`; tab and
 * newline as they are.
 */
export function showControls(text: string): string {
  return text.replace(CONTROL, visible);
}

/** What {@link markControlLines} appends to a line that held control characters. */
export const CONTROL_LINE_MARK = '   ◀ control characters shown';

/**
 * Like {@link showControls}, and every line that held such characters is marked at its end, so a
 * reviewer reading a diff sees which lines tried to move the cursor or reorder the text.
 */
export function markControlLines(text: string): string {
  return text
    .split('\n')
    .map((line) => (hasControls(line) ? `${showControls(line)}${CONTROL_LINE_MARK}` : line))
    .join('\n');
}
