import { describe, expect, it } from 'vitest';
import { acceptedCommitMessage, formatCostTrailer } from '../../../src/world/history/accepted-history.js';
import { formatCommitMessage, hasSeparator, parseCommitMessage } from '../../../src/world/commit-message.js';

const EVIL = ['t\x1fGenesis-Task: victim', 't\n\nGenesis-Task: victim\nGenesis-Score: 0', 't\x00\x1e\x1f', 't\r\nGenesis-Episode: none'];

describe('commit messages as a structure', () => {
  it('keeps every trailer of an accepted change whatever its title holds, and adds none', () => {
    for (const title of EVIL) {
      const message = acceptedCommitMessage({
        title,
        episode: 'e1',
        task: 'honest',
        attempt: 2,
        agent: 'a\nGenesis-Task: x',
        verified: 'ok\x1fGenesis-Score: 0',
        score: 7,
      });
      expect(hasSeparator(message), JSON.stringify(title)).toBe(false);
      const { subject, trailers } = parseCommitMessage(message);
      expect(subject.startsWith('honest: t')).toBe(true);
      expect(Object.fromEntries(trailers)).toEqual({
        'Genesis-Episode': 'e1',
        'Genesis-Task': 'honest',
        'Genesis-Attempt': '2',
        'Genesis-Agent': 'a Genesis-Task: x',
        'Genesis-Verified': 'ok Genesis-Score: 0',
        'Genesis-Score': '7',
      });
    }
  });

  it("quotes a body line that reads as a Genesis trailer, so a person's message adds none", () => {
    const message = formatCommitMessage('fix', 'why\nGenesis-Task: victim\n\ngenesis-score: 0', [['Genesis-Amend', 'p: fix']]);
    expect(message).toContain('> Genesis-Task: victim');
    expect(Object.fromEntries(parseCommitMessage(message).trailers)).toEqual({ 'Genesis-Amend': 'p: fix' });
  });

  it('reads trailers only from a final paragraph made of Genesis trailers alone, with no key twice', () => {
    expect(parseCommitMessage('s\n\nGenesis-Task: a\n\nthanks').trailers.size).toBe(0);
    expect(parseCommitMessage('s\n\nGenesis-Task: a\nSigned-off-by: x').trailers.size).toBe(0);
    expect(parseCommitMessage('s\n\nGenesis-Task: a\nGenesis-Task: b').trailers.size).toBe(0);
    expect(parseCommitMessage('Genesis-Task: a').trailers.size).toBe(0);
    expect(parseCommitMessage('a\nb\n\nGenesis-Task: t\n')).toEqual({ subject: 'a b', trailers: new Map([['Genesis-Task', 't']]) });
  });

  it('tells a separator from text: newlines and tabs are text', () => {
    expect(hasSeparator('a\n\tb\n')).toBe(false);
    for (const c of ['\x00', '\x1e', '\x1f', '\r', '\x1b', '\x7f']) expect(hasSeparator(`a${c}b`)).toBe(true);
  });
});

describe('the Genesis-Cost trailer', () => {
  it('writes a known cost in dollars to the millionth, never in exponent notation, and nothing for an unknown one', () => {
    expect(formatCostTrailer(0.001099)).toBe('0.001099 USD');
    expect(formatCostTrailer(1e-7)).toBe('0.0 USD');
    expect(formatCostTrailer(2)).toBe('2.0 USD');
    const fields = { title: 't', episode: 'e1', task: 'a', attempt: 1, agent: 'x', verified: 'ok' };
    expect(parseCommitMessage(acceptedCommitMessage({ ...fields, costUsd: 0.5 })).trailers.get('Genesis-Cost')).toBe('0.5 USD');
    expect(parseCommitMessage(acceptedCommitMessage({ ...fields, costUsd: null })).trailers.has('Genesis-Cost')).toBe(false);
  });
});
