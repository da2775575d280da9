import { describe, expect, it } from 'vitest';
import { measureRaceWins } from '../../../src/ledger/race-wins.js';

describe('measureRaceWins', () => {
  it('counts each race once per agent that ran in it, won by the agent whose racer landed or waits for review', () => {
    const wins = measureRaceWins([
      { race: 'r1', agent: 'claude-code', outcome: 'outrun' },
      { race: 'r1', agent: 'codex:gpt-5-codex', outcome: 'accepted' },
      { race: 'r1', agent: 'codex:gpt-5-codex', outcome: 'failed' },
      { race: 'r2', agent: 'claude-code', outcome: 'awaiting-review' },
      { race: 'r2', agent: 'codex:gpt-5-codex', outcome: 'outrun' },
      { race: 'r3', agent: 'claude-code', outcome: 'rejected' },
      { race: null, agent: 'claude-code', outcome: 'accepted' },
    ]);
    expect(wins).toEqual({
      races: 3,
      decided: 2,
      byAgent: [
        { agent: 'codex:gpt-5-codex', model: 'gpt-5-codex', raced: 2, won: 1 },
        { agent: 'claude-code', model: null, raced: 3, won: 1 },
      ],
    });
  });
});
