import { assertInteger, rejectModelInput } from './validate.js';

/** A reproducible stream of random numbers: the same seed gives the same sequence on any machine. */
export interface Rng {
  /** The next 32-bit unsigned integer. */
  nextUint32(): number;
  /** The next float, uniform in [0, 1), with 32 bits of resolution. */
  next(): number;
  /** The next integer, uniform in [0, n). */
  nextInt(n: number): number;
}

const TWO_TO_32 = 4_294_967_296;

/** splitmix32: spreads one 32-bit seed over xoshiro's four words, so seeds 1 and 2 give unrelated streams. */
function splitmix32(state: { x: number }): number {
  state.x = (state.x + 0x9e3779b9) | 0;
  let t = state.x ^ (state.x >>> 16);
  t = Math.imul(t, 0x21f0aaad);
  t ^= t >>> 15;
  t = Math.imul(t, 0x735a2d97);
  return (t ^ (t >>> 15)) >>> 0;
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}

/**
 * xoshiro128** (Blackman and Vigna) seeded through splitmix32. Only 32-bit integer arithmetic
 * (Math.imul, shifts), so the stream is identical on every JavaScript engine, unlike Math.random.
 * @param seed an integer in [0, 2^32 − 1]
 */
export function createRng(seed: number): Rng {
  assertInteger('seed', seed, 0);
  if (seed >= TWO_TO_32) rejectModelInput(`seed must be an integer in [0, 4294967295], got ${seed}`);
  const mix = { x: seed | 0 };
  return createXoshiro128([splitmix32(mix), splitmix32(mix), splitmix32(mix), splitmix32(mix)]);
}

/**
 * xoshiro128** from its raw state, as in the reference C code (state 1, 2, 3, 4 gives 11520, 0,
 * 5927040, 70819200, …). Use {@link createRng} unless you are checking the generator itself.
 */
export function createXoshiro128(state: readonly [number, number, number, number]): Rng {
  let [s0, s1, s2, s3] = state.map((word) => word | 0) as [number, number, number, number];
  // An all-zero state would only ever produce zeros.
  if ((s0 | s1 | s2 | s3) === 0) s0 = 1;

  const nextUint32 = (): number => {
    const result = Math.imul(rotl(Math.imul(s1, 5), 7), 9) >>> 0;
    const t = s1 << 9;
    s2 ^= s0;
    s3 ^= s1;
    s1 ^= s2;
    s0 ^= s3;
    s2 ^= t;
    s3 = rotl(s3, 11);
    return result;
  };
  return {
    nextUint32,
    next: () => nextUint32() / TWO_TO_32,
    nextInt: (n: number) => {
      assertInteger('n', n, 1);
      return Math.floor((nextUint32() / TWO_TO_32) * n);
    },
  };
}
