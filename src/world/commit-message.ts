/**
 * The commit messages Genesis writes on the accepted branch, as a structure: a one-line subject,
 * an optional body, and a final paragraph that holds Genesis's trailers and nothing else. Agent
 * text (a task title, an agent's name, a summary that quotes a test) enters only the subject and
 * trailer values, each made one line without control characters, and a body line that looks like
 * a Genesis trailer is quoted; so the final paragraph is always the one Genesis wrote, and the
 * reader below takes trailers from it alone.
 */

/** Any C0 control character or DEL: a field separator, a newline, an escape. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what we look for
const CONTROL = /[\u0000-\u001f\u007f]/g;
/** A control character a message never needs (a newline or a tab is text). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what we look for
const SEPARATOR = /[\u0000-\u0008\u000b-\u001f\u007f]/;
const GENESIS_KEY = /^genesis-[a-z]+\s*:/i;
const TRAILER_LINE = /^(Genesis-[A-Za-z]+): (.*)$/;

/** One line of text: control characters become spaces, runs of white space one space. */
export function toOneLine(text: string): string {
  return text.replace(CONTROL, ' ').replace(/\s+/g, ' ').trim();
}

/** A person's multi-line text for a body: no control character but newlines, no line that reads as a Genesis trailer. */
export function toBody(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((line) => line.replace(CONTROL, ' '))
    .map((line) => (GENESIS_KEY.test(line.trim()) ? `> ${line}` : line))
    .join('\n')
    .trim();
}

/** Formats a message: subject, body (when there is one), then the trailers as the last paragraph. */
export function formatCommitMessage(subject: string, body: string, trailers: ReadonlyArray<readonly [key: string, value: string]>): string {
  const block = trailers.map(([key, value]) => `${key}: ${toOneLine(value)}`).join('\n');
  const text = toBody(body);
  return `${toOneLine(subject)}\n\n${text ? `${text}\n\n` : ''}${block}\n`;
}

/** Whether a message holds a control character other than a newline or a tab (never one Genesis wrote). */
export function hasSeparator(message: string): boolean {
  return SEPARATOR.test(message);
}

export interface ParsedMessage {
  /** The first paragraph joined into one line, as `git log --format=%s` shows it. */
  subject: string;
  /** Genesis trailers of the final paragraph; empty when that paragraph is not a block of them. */
  trailers: Map<string, string>;
}

/**
 * Reads a commit message the way Genesis wrote it: trailers only from the final paragraph, and
 * only when every line of it is a Genesis trailer and no key repeats (Genesis never writes it
 * otherwise). A line that merely looks like a trailer in the subject or body counts for nothing.
 */
export function parseCommitMessage(message: string): ParsedMessage {
  const paragraphs = message
    .replace(/\r\n?/g, '\n')
    .split(/\n[ \t]*\n/)
    .map((p) => p.replace(/^\n+|\n+$/g, ''))
    .filter((p) => p.trim() !== '');
  const subject = (paragraphs[0] ?? '')
    .split('\n')
    .map((l) => l.trim())
    .join(' ');
  const trailers = new Map<string, string>();
  if (paragraphs.length < 2) return { subject, trailers };
  for (const line of paragraphs.at(-1)!.split('\n')) {
    const match = TRAILER_LINE.exec(line);
    if (!match || trailers.has(match[1]!)) return { subject, trailers: new Map() };
    trailers.set(match[1]!, match[2]!.trim());
  }
  return { subject, trailers };
}
