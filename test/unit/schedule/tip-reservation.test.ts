import { describe, expect, it } from 'vitest';
import { decide, initialPolicyState, type PolicyState } from '../../../src/schedule/run-policy.js';
import { answersTipRequest, reservesTips } from '../../../src/schedule/tip-reservation.js';
import type { TaskSpec } from '../../../src/manifest/schema.js';

const T0 = Date.parse('2026-12-01T08:00:00Z');
const BASE = 'b'.repeat(40);

function task(id: string): TaskSpec {
  return { id, title: id, description: '', acceptance: '', paths: [`src/${id}.js`], dependsOn: [], witness: false, review: false, kind: 'build' };
}

/** A policy running episode e1 of task a. */
function running(ratchet: boolean): PolicyState {
  const state = initialPolicyState({
    config: { parallelism: 1, maxAttempts: 2, blockOnRepeat: true, budgets: {}, distributed: true, ratchet },
    tasks: [task('a'), task('b')],
    done: new Set(),
    records: [],
    now: T0,
    running: new Map([['e1', 'a']]),
  });
  return state;
}

describe('places in the integration queue before a gate', () => {
  it('are given while the run has not finished, and never in a ratchet world (the score of what lands is known only after its gate)', () => {
    expect(reservesTips(running(false))).toBe(true);
    expect(reservesTips(running(true))).toBe(false);
    const finished = decide(running(false), { type: 'aborted' }).state;
    expect(finished.finished).toEqual({ kind: 'interrupted' });
    expect(reservesTips(finished)).toBe(false);
  });

  it("are never given to a racer: a place behind a fellow racer would verify the winner on a loser's change", () => {
    const state = running(false);
    const raced = { ...state, races: new Map([['e1', { task: 'a', racers: ['e1', 'e2'], winner: null, passes: [] }]]) };
    expect(reservesTips(raced, 'e2')).toBe(false);
    expect(reservesTips(raced, 'e9')).toBe(true);
    expect(answersTipRequest(raced, { episodeId: 'e1', task: 'a', base: BASE }, { base: BASE })).toBe(false);
    expect(answersTipRequest(state, { episodeId: 'e1', task: 'a', base: BASE }, { base: BASE })).toBe(true);
  });

  it('follow the gate mode of the manifest a landing brings', () => {
    const toRatchet = decide(running(false), { type: 'landed', task: 'b', tasks: [task('a'), task('b')], ratchet: true }).state;
    expect(reservesTips(toRatchet)).toBe(false);
    const back = decide(toRatchet, { type: 'landed', task: 'b', tasks: [task('a'), task('b')], ratchet: false }).state;
    expect(reservesTips(back)).toBe(true);
  });

  it('go to a worker only for an episode the run is running, for its task, from the base the run gave it', () => {
    const state = running(false);
    const request = { episodeId: 'e1', task: 'a', base: BASE };
    expect(answersTipRequest(state, request, { base: BASE })).toBe(true);
    expect(answersTipRequest(state, { ...request, task: 'b' }, { base: BASE })).toBe(false);
    expect(answersTipRequest(state, { ...request, base: 'f'.repeat(40) }, { base: BASE })).toBe(false);
    expect(answersTipRequest(state, { ...request, episodeId: 'e2' }, undefined)).toBe(false);
    expect(answersTipRequest(state, request, undefined)).toBe(false);
    expect(answersTipRequest(running(true), request, { base: BASE })).toBe(false);
  });
});
