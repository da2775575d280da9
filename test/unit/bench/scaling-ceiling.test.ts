import { describe, expect, it } from 'vitest';
import { ceilingS, inOrderCeilingS } from '../../../bench/scaling.bench.js';

describe('the scaling bench ceilings', () => {
  it('count a failed first attempt as one more episode of a 2 s agent and a 3 s gate', () => {
    expect(ceilingS({ tasks: 8, workers: 4, failEvery: 0 })).toBe(10);
    expect(ceilingS({ tasks: 10, workers: 4, failEvery: 5 })).toBe(15);
  });

  it('in task order, give a task that fails late the round its retry needs', () => {
    // t1-t4, then t5-t8 (t5 fails), then t5 again with t9 and t10 (t10 fails), then t10 again.
    expect(inOrderCeilingS({ tasks: 10, workers: 4, failEvery: 5 })).toBe(20);
    expect(inOrderCeilingS({ tasks: 8, workers: 4, failEvery: 0 })).toBe(10);
    // One slot: every episode one after another, the retry right after its failure.
    expect(inOrderCeilingS({ tasks: 5, workers: 1, failEvery: 5 })).toBe(30);
  });
});
