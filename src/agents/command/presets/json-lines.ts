/** A JSON object, as agents print them one per line. */
export type JsonObject = Record<string, unknown>;

/**
 * Calls `onLine` for every complete line of a stream fed in chunks; the unfinished last line is
 * kept until its newline (or `flush`) arrives. A line longer than `maxLine` characters is dropped
 * (a file's content echoed by the agent, not a usage line).
 */
export function lineSplitter(onLine: (line: string) => void, maxLine = 1_000_000): { push(chunk: string): void; flush(): void } {
  let pending = '';
  let dropping = false;
  return {
    push(chunk) {
      const parts = (pending + chunk).split('\n');
      pending = parts.pop() ?? '';
      for (const line of parts) {
        if (!dropping) onLine(line);
        dropping = false;
      }
      if (pending.length > maxLine) {
        pending = '';
        dropping = true;
      }
    },
    flush() {
      if (pending && !dropping) onLine(pending);
      pending = '';
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
