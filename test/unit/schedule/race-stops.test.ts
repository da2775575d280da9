import { describe, expect, it } from 'vitest';
import { initialPolicyState, racersToStop, type RaceState } from '../../../src/schedule/run-policy.js';

const task = { id: 'a', title: 'a', paths: ['src/a.js'] } as Parameters<typeof initialPolicyState>[0]['tasks'][number];

function state(races: Record<string, RaceState>, running: string[], options: { done?: string[]; stopOnWin?: boolean } = {}) {
  return initialPolicyState({
    config: { stopOnWin: options.stopOnWin ?? true } as Parameters<typeof initialPolicyState>[0]['config'],
    tasks: [task],
    done: new Set(options.done ?? []),
    records: [],
    now: 0,
    running: new Map(running.map((id) => [id, 'a'])),
    races: new Map(Object.entries(races)),
  });
}

describe('racers a restarted run stops', () => {
  it('stops the racers still running in a race decided before the stop, and in one whose task has landed', () => {
    expect(racersToStop(state({ r: { task: 'a', racers: ['e1', 'e2', 'e3'], winner: 'e1', passes: [] } }, ['e2', 'e3']))).toEqual(['e2', 'e3']);
    expect(racersToStop(state({ r: { task: 'a', racers: ['e2', 'e3'], winner: null, passes: [] } }, ['e2', 'e3'], { done: ['a'] }))).toEqual(['e2', 'e3']);
  });

  it('leaves an undecided race, and every racer when the world asks not to stop them', () => {
    expect(racersToStop(state({ r: { task: 'a', racers: ['e1', 'e2'], winner: null, passes: [] } }, ['e1', 'e2']))).toEqual([]);
    expect(racersToStop(state({ r: { task: 'a', racers: ['e1', 'e2'], winner: 'e1', passes: [] } }, ['e2'], { stopOnWin: false }))).toEqual([]);
  });
});
