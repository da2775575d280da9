/** A JSON object, as agents print them one per line. */
export type JsonObject = Record<string, unknown>;

/**
 * Calls `onLine` for every complete line of a stream fed in chunks; the unfinished last line is
 * kept until its newline (or `flush`) arrives. A line longer than `maxLine` characters is dropped
 * (a file's content echoed by the agent, not a usage line). Each chunk is looked at once: the
 * unfinished line is kept in pieces and joined when its newline comes, so a long line fed a byte
 * at a time costs its length, not its square.
 */
export function lineSplitter(onLine: (line: string) => void, maxLine = 1_000_000): { push(chunk: string): void; flush(): void } {
  let pieces: string[] = [];
  let pending = 0;
  let dropping = false;
  const keep = (piece: string) => {
    if (dropping) return;
    pending += piece.length;
    if (pending > maxLine) {
      pieces = [];
      pending = 0;
      dropping = true;
    } else if (piece !== '') pieces.push(piece);
  };
  const end = () => {
    if (!dropping) onLine(pieces.join(''));
    pieces = [];
    pending = 0;
    dropping = false;
  };
  return {
    push(chunk) {
      let from = 0;
      for (let at = chunk.indexOf('\n'); at !== -1; at = chunk.indexOf('\n', from)) {
        keep(chunk.slice(from, at));
        end();
        from = at + 1;
      }
      keep(chunk.slice(from));
    },
    flush() {
      if (pending > 0 && !dropping) onLine(pieces.join(''));
      pieces = [];
      pending = 0;
    },
  };
}

/** The line as a JSON object, or null for any other line (progress text, a warning). */
export function parseJsonObject(line: string): JsonObject | null {
  const text = line.trim();
  if (!text.startsWith('{')) return null;
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as JsonObject) : null;
  } catch {
    return null;
  }
}

/** `value` as an object, or an empty one. */
export function objectAt(value: unknown): JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as JsonObject) : {};
}

/** `value` when it is a finite number, else null. */
export function numberAt(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

/** The sum of the known numbers, or null when none is known. */
export function sumKnown(...values: Array<number | null>): number | null {
  const known = values.filter((v): v is number => v !== null);
  return known.length === 0 ? null : known.reduce((a, b) => a + b, 0);
}
