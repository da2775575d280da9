import { describe, expect, it } from 'vitest';
import { simulatePipeline } from '../../../src/integrate/pipeline-model.js';

describe('the pipeline model', () => {
  it('gives the same result for the same seed', () => {
    const input = { workers: 4, agentMin: 10, gateMin: 5, reject: 0.2, seed: 7 };
    expect(simulatePipeline(input)).toEqual(simulatePipeline(input));
  });

  it('gates each change once with one worker, at the ceiling', () => {
    const r = simulatePipeline({ workers: 1, agentMin: 10, gateMin: 5, tasks: 10, jitter: 0 });
    expect(r.gatesPerAccepted).toBe(1);
    expect(r.makespanMin).toBeCloseTo(150, 6);
    expect(r.efficiency).toBeCloseTo(1, 6);
  });

  it('never waits on integration when verification slots keep up: many workers stay near the ceiling', () => {
    const r = simulatePipeline({ workers: 16, agentMin: 10, gateMin: 5, tasks: 320, seed: 3 });
    expect(r.efficiency).toBeGreaterThan(0.85);
    expect(r.accepted).toBe(320);
  });

  it('pays for rejections with more gates and a later end', () => {
    const clean = simulatePipeline({ workers: 4, agentMin: 10, gateMin: 5, tasks: 80, seed: 5 });
    const failing = simulatePipeline({ workers: 4, agentMin: 10, gateMin: 5, tasks: 80, reject: 0.2, seed: 5 });
    expect(failing.rejected).toBeGreaterThan(0);
    expect(failing.makespanMin).toBeGreaterThan(clean.makespanMin);
    expect(failing.accepted).toBe(80);
  });

  it('slows down when verification slots are scarce', () => {
    const many = simulatePipeline({ workers: 8, agentMin: 1, gateMin: 5, tasks: 80, seed: 2 });
    const one = simulatePipeline({ workers: 8, agentMin: 1, gateMin: 5, tasks: 80, slots: 1, seed: 2 });
    expect(one.makespanMin).toBeGreaterThan(many.makespanMin * 1.5);
  });
});
