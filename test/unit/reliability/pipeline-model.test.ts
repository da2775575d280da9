import { describe, expect, it } from 'vitest';
import { simulatePipeline } from '../../../src/reliability/pipeline-model.js';

const FREE = { startMin: 0, episodeOverheadMin: 0, buildMin: 0, landMin: 0 };

describe('the pipeline model', () => {
  it('gives the same result for the same seed', () => {
    const input = { workers: 4, agentMin: 10, gateMin: 5, reject: 0.2, verifyReject: 0.1, seed: 7 };
    expect(simulatePipeline(input)).toEqual(simulatePipeline(input));
  });

  it('gates each change once with one worker, at the ceiling when nothing else costs', () => {
    const r = simulatePipeline({ workers: 1, agentMin: 10, gateMin: 5, tasks: 10, jitter: 0, ...FREE });
    expect(r.gatesPerAccepted).toBe(1);
    expect(r.verifications).toBe(0);
    expect(r.makespanMin).toBeCloseTo(150, 6);
    expect(r.efficiency).toBeCloseTo(1, 6);
  });

  it('adds each episode its start, its reserved build and its overhead, and the last landing', () => {
    const costs = { workers: 1, agentMin: 1, gateMin: 1, tasks: 10, jitter: 0, startMin: 0.05, episodeOverheadMin: 0.5, buildMin: 0.1, landMin: 0.25 };
    // In process the change is built on its tip before its gate, which then judges the very commit that lands.
    const inProcess = simulatePipeline(costs);
    expect(inProcess.makespanMin).toBeCloseTo(10 * 2.65 + 0.25, 6);
    expect(inProcess.gatesPerAccepted).toBe(1);
    // Over BullMQ the next episode starts before the last change landed, on a base that then moves: its change is verified again.
    const onBase = simulatePipeline({ ...costs, gateOnTip: false });
    expect(onBase.makespanMin).toBeCloseTo(10 * 2.55 + 0.1 + 1 + 0.25, 6);
    expect(onBase.verifications).toBe(9);
  });

  it('starts episodes one at a time: a slow scheduler delays the last of a wave', () => {
    const quick = simulatePipeline({ workers: 8, agentMin: 1, gateMin: 1, tasks: 8, jitter: 0, ...FREE });
    const slow = simulatePipeline({ workers: 8, agentMin: 1, gateMin: 1, tasks: 8, jitter: 0, ...FREE, startMin: 0.5 });
    expect(slow.makespanMin).toBeCloseTo(quick.makespanMin + 8 * 0.5, 6);
  });

  it('builds and lands one change at a time: a slow integrator bounds throughput whatever the workers', () => {
    const r = simulatePipeline({ workers: 16, agentMin: 1, gateMin: 1, tasks: 64, jitter: 0, episodeOverheadMin: 0, buildMin: 0.25, landMin: 0.25 });
    expect(r.makespanMin).toBeGreaterThanOrEqual(64 * 0.5);
    expect(r.accepted).toBe(64);
  });

  it('verifies on tips with the verification time when it differs from the own gate', () => {
    const base = { workers: 8, agentMin: 2, gateMin: 3, tasks: 80, seed: 8, gateOnTip: false };
    expect(simulatePipeline({ ...base, verifyMin: 9 }).makespanMin).toBeGreaterThan(simulatePipeline(base).makespanMin);
  });

  it('rejects changes that conflict at their build, without a gate, and retries them', () => {
    const r = simulatePipeline({ workers: 8, agentMin: 2, gateMin: 3, tasks: 80, seed: 9, conflict: 0.2 });
    expect(r.rejected).toBeGreaterThan(0);
    expect(r.accepted).toBe(80);
  });

  it('never waits on integration when verification slots keep up: many workers stay near the ceiling', () => {
    const r = simulatePipeline({ workers: 16, agentMin: 10, gateMin: 5, tasks: 320, seed: 3 });
    expect(r.efficiency).toBeGreaterThan(0.85);
    expect(r.accepted).toBe(320);
  });

  it('gates on the speculative tip save second gates against gating on the base', () => {
    const onTip = simulatePipeline({ workers: 8, agentMin: 2, gateMin: 3, tasks: 80, seed: 4 });
    const onBase = simulatePipeline({ workers: 8, agentMin: 2, gateMin: 3, tasks: 80, seed: 4, gateOnTip: false });
    expect(onTip.gatesPerAccepted).toBeLessThan(onBase.gatesPerAccepted);
    expect(onBase.verifications).toBeGreaterThan(0);
  });

  it('pays for changes that fail their own gate with longer gates, retries and a later end', () => {
    const clean = simulatePipeline({ workers: 4, agentMin: 10, gateMin: 5, tasks: 80, seed: 5 });
    const failing = simulatePipeline({ workers: 4, agentMin: 10, gateMin: 5, tasks: 80, reject: 0.2, seed: 5 });
    const mean = (factor: number) =>
      Array.from(
        { length: 10 },
        (_, i) => simulatePipeline({ workers: 4, agentMin: 10, gateMin: 5, tasks: 80, reject: 0.2, seed: i + 1, failedGateFactor: factor }).makespanMin,
      ).reduce((a, b) => a + b) / 10;
    expect(failing.rejected).toBeGreaterThan(0);
    expect(failing.makespanMin).toBeGreaterThan(clean.makespanMin);
    expect(mean(5)).toBeGreaterThan(mean(1));
    expect(failing.accepted).toBe(80);
  });

  it('re-bases those behind a change that fails on its tip: they are verified again', () => {
    const base = { workers: 8, agentMin: 2, gateMin: 3, tasks: 80, seed: 6, gateOnTip: false };
    const clean = simulatePipeline(base);
    const failing = simulatePipeline({ ...base, verifyReject: 0.2 });
    expect(failing.rejected).toBeGreaterThan(0);
    expect(failing.accepted).toBe(80);
    // Each failure costs its own retry and a verification for every change that was behind it.
    expect(failing.verifications).toBeGreaterThan(clean.verifications + failing.rejected);
    expect(failing.makespanMin).toBeGreaterThan(clean.makespanMin);
  });

  it('fails the gates reserved behind a change that fails its own: they run on its tip, then on their base, then are verified', () => {
    // Two at once, one after the other by a hair: the second reserves its place behind the first, which fails.
    const input = { workers: 2, agentMin: 1, gateMin: 1, tasks: 2, jitter: 0, ...FREE, failedGateFactor: 3 };
    const failing = Array.from({ length: 200 }, (_, i) => simulatePipeline({ ...input, reject: 0.5, seed: i + 1 }));
    // Runs where only the first failed: its agent 0-1 min and failing gate 1-4, the second's 1-5 (3 on the broken tip, 1 on its base), verified
    // 4-5 once the first is out; the first's retry 4-6.
    const behind = failing.filter((r) => r.rejected === 1 && r.verifications === 1);
    expect(behind.length).toBeGreaterThan(0);
    for (const r of behind) {
      expect(r.gatesPerAccepted).toBeCloseTo(4 / 2, 6);
      expect(r.makespanMin).toBeCloseTo(6, 6);
    }
  });

  it('rejects a change that breaks with one ahead on its tip, after its gates there and on its base, and retries it', () => {
    const base = { workers: 4, agentMin: 2, gateMin: 3, tasks: 40, seed: 6 };
    const clean = simulatePipeline(base);
    const clashing = simulatePipeline({ ...base, verifyReject: 0.2 });
    expect(clashing.rejected).toBeGreaterThan(0);
    expect(clashing.accepted).toBe(40);
    expect(clashing.verifications).toBeGreaterThan(clashing.rejected);
    expect(clashing.makespanMin).toBeGreaterThan(clean.makespanMin);
  });

  it('slows down when verification slots are scarce', () => {
    const many = simulatePipeline({ workers: 8, agentMin: 1, gateMin: 5, tasks: 80, seed: 2 });
    const one = simulatePipeline({ workers: 8, agentMin: 1, gateMin: 5, tasks: 80, slots: 1, seed: 2, gateOnTip: false });
    expect(one.makespanMin).toBeGreaterThan(many.makespanMin * 1.5);
  });
});
