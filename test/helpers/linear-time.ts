import { expect } from 'vitest';

/** Runs shorter than this are timed as this long: below it a ratio measures the machine's noise. */
const FLOOR_MS = 5;
/** What reading n characters may take at all: a linear reader takes milliseconds; past this, the 4n run is not worth waiting for. */
const MAX_AT_N_MS = 1000;
/** Linear input grows a reader's time about 4 times from n to 4n, quadratic 16 times: the line between, with room for a collection of garbage. */
const MAX_GROWTH = 10;

function timed(run: () => unknown): number {
  const start = performance.now();
  run();
  return performance.now() - start;
}

/**
 * Asserts that `read` stays linear on the shape `make` builds: n characters read within a
 * second, and its time at 4n well under 16 times its time at n (the best of up to five runs of
 * each, taken in turn until they pass; a run far over the bound ends it, so a quadratic reader
 * fails after one long run).
 */
export function expectLinear(read: (text: string) => unknown, make: (n: number) => string, n = 40_000): void {
  const small = make(n);
  const large = make(4 * n);
  const first = timed(() => read(small)); // also compiles what is timed next
  expect(first, `${first.toFixed(0)} ms at ${n} characters`).toBeLessThan(MAX_AT_N_MS);
  // Runs at n and at 4n taken in turn, so that what else the machine does weighs on both alike.
  let atN = first;
  let at4n = Number.POSITIVE_INFINITY;
  const bound = () => MAX_GROWTH * Math.max(atN, FLOOR_MS);
  for (let tries = 0; tries < 5 && at4n >= bound(); tries++) {
    atN = Math.min(
      atN,
      timed(() => read(small)),
    );
    const run = timed(() => read(large));
    at4n = Math.min(at4n, run);
    if (run > 20 * bound()) break; // no pause of the machine is that long: the reader is what grows
  }
  expect(at4n, `${atN.toFixed(2)} ms at ${n} characters, ${at4n.toFixed(2)} ms at ${4 * n}`).toBeLessThan(bound());
}

/** `text` fed to `push` in pieces of `size` characters, `after` called after each (as a CLI's output arrives). */
export function inChunks(text: string, size: number, push: (chunk: string) => void, after: () => void = () => undefined): void {
  for (let i = 0; i < text.length; i += size) {
    push(text.slice(i, i + size));
    after();
  }
}
