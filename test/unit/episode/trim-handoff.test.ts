import { describe, expect, it } from 'vitest';
import { trimNotes } from '../../../src/episode/trim-handoff.js';

describe('trimNotes', () => {
  it('leaves a file within the limit as it is', () => {
    expect(trimNotes('# P\n- a\n', 100)).toEqual({ text: '# P\n- a\n', dropped: 0 });
  });

  it('drops the oldest notes until three quarters of the limit, keeping the heading and the newest', () => {
    const text = `# Progress\n${Array.from({ length: 20 }, (_, i) => `- note ${String(i).padStart(2, '0')}`).join('\n')}\n`;
    const { text: kept, dropped } = trimNotes(text, 120);
    expect(Buffer.byteLength(kept)).toBeLessThanOrEqual(90);
    expect(kept.startsWith('# Progress\n')).toBe(true);
    expect(kept.endsWith('- note 19\n')).toBe(true);
    expect(kept).not.toContain('note 00');
    expect(dropped).toBeGreaterThan(10);
  });

  it('drops one line larger than the limit whole', () => {
    const { text } = trimNotes(`# P\n${'x'.repeat(500)}\n- last\n`, 100);
    expect(text).toBe('# P\n- last\n');
  });
});
