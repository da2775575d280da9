import { KEY_FORMATS } from '../manifest/secret-shapes.js';

/**
 * Takes secrets out of text before it is stored: the values of given variables, and anything
 * shaped like a well-known key, whoever wrote it (an agent echoing its environment, a test that
 * prints a fixture key, a model repeating what it read). Pure: no environment, no I/O.
 */

/** What a scrubbed secret is replaced with. */
export const REDACTED = '[redacted]';

/** Values shorter than this are not scrubbed by value: "1", "true" or "us-east-1" are no secrets, and would blank half a log. */
export const MIN_SECRET_LENGTH = 8;

/** What a key format's match becomes: the redaction, after the words a format keeps (its capture groups). */
const redact = (_match: string, ...rest: unknown[]): string => {
  // The groups come before the match's offset, the first number among the arguments.
  const kept = rest.slice(
    0,
    rest.findIndex((part) => typeof part === 'number'),
  );
  return `${kept.map((part) => (typeof part === 'string' ? part : '')).join('')}${REDACTED}`;
};

/**
 * `text` with every occurrence of each value (as written, and as it appears inside a JSON string)
 * and every well-known key replaced by {@link REDACTED}. Longer values go first, so a value
 * containing another is not left half-scrubbed.
 */
export function scrubSecrets(text: string, values: readonly string[] = []): string {
  let out = text;
  const forms = new Set<string>();
  for (const value of values) {
    if (value.length < MIN_SECRET_LENGTH) continue;
    forms.add(value);
    forms.add(JSON.stringify(value).slice(1, -1));
  }
  for (const form of [...forms].sort((a, b) => b.length - a.length)) out = out.split(form).join(REDACTED);
  for (const { pattern } of KEY_FORMATS) out = out.replace(pattern, redact);
  return out;
}

/** Whether `text` still holds a value or key that {@link scrubSecrets} would take out. */
export function holdsSecret(text: string, values: readonly string[] = []): boolean {
  return scrubSecrets(text, values) !== text;
}
