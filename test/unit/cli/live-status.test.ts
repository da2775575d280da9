import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createRunPrinter } from '../../../src/cli/live-status.js';

/** A stream that keeps what is written: a pipe, or a terminal when `tty`. */
function stream(tty: boolean): NodeJS.WriteStream & { text: string[] } {
  const text: string[] = [];
  return { isTTY: tty, columns: 100, text, write: (s: string) => text.push(s) > 0 } as unknown as NodeJS.WriteStream & { text: string[] };
}

describe("genesis run's output between events", () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date('2026-12-02T10:00:00Z'));
  });
  afterEach(() => vi.useRealTimers());

  it('says on plain output what is still running after half a minute of silence, then every half minute', () => {
    const out = stream(false);
    const printer = createRunPrinter(out);
    printer.print({ type: 'episode-start', id: 'e1', task: 'versions', attempt: 1 });
    printer.print({ type: 'episode-phase', id: 'e1', task: 'versions', phase: 'agent' });
    vi.advanceTimersByTime(12_000);
    printer.print({ type: 'episode-phase', id: 'e1', task: 'versions', phase: 'gate' });
    // Events that print nothing (a phase, the queue) are not lines: the silence goes on.
    printer.print({ type: 'integration', entries: [] });
    vi.advanceTimersByTime(19_000);
    const still = out.text.filter((l) => l.includes('still running'));
    expect(still).toEqual(['10:00:30 … still running: versions (gate, 18s)\n']);
    vi.advanceTimersByTime(15_000);
    expect(out.text.filter((l) => l.includes('still running'))).toHaveLength(1);
    // Past its own gate, the change is in the integration queue until it lands.
    printer.print({ type: 'integration', entries: [{ id: 'e1', task: 'versions', stage: 'verifying', onto: null, commit: null }] });
    vi.advanceTimersByTime(16_000);
    expect(out.text.at(-1)).toBe('10:01:00 … still running: versions (integration queue (verifying), 14s)\n');
    printer.print({
      type: 'episode-end',
      id: 'e1',
      task: 'versions',
      attempt: 1,
      outcome: 'accepted',
      reason: null,
      message: null,
      durationMs: 1,
      commit: 'c'.repeat(40),
    } as never);
    const count = out.text.length;
    vi.advanceTimersByTime(60_000);
    expect(out.text.slice(count).some((l) => l.includes('still running'))).toBe(false);
    printer.finish();
  });

  it('prints a progress line on plain output only when it changed, after the events that changed it', () => {
    const out = stream(false);
    const printer = createRunPrinter(out);
    const progress = (done: number, running: string[]) => printer.print({ type: 'progress', done, tasks: 2, running, accepted: done, rejected: 0, failed: 0 });
    printer.print({ type: 'episode-start', id: 'e1', task: 'a', attempt: 1 });
    progress(0, ['a']);
    vi.advanceTimersByTime(1500);
    // The same figures again and again: no new line.
    for (let i = 0; i < 11; i++) progress(0, ['a']);
    vi.advanceTimersByTime(1500);
    // The landing is counted before its episode's end arrives: the line waits for it.
    progress(1, []);
    printer.print({
      type: 'episode-end',
      id: 'e1',
      task: 'a',
      attempt: 1,
      outcome: 'accepted',
      reason: null,
      message: null,
      durationMs: 1,
      commit: 'c'.repeat(40),
    } as never);
    vi.advanceTimersByTime(1500);
    printer.finish();
    const lines = out.text.map((l) => l.replace(/^\d\d:\d\d:\d\d /, '').trimEnd());
    expect(lines).toEqual([
      expect.stringMatching(/^▶ a attempt 1/),
      '  tasks 0/2 done · accepted 0 · rejected 0 · failed 0 · running: a',
      expect.stringMatching(/^✓ a attempt 1 accepted/),
      '  tasks 1/2 done · accepted 1 · rejected 0 · failed 0 · running: -',
    ]);
  });

  it('leaves that to the status line on a terminal', () => {
    const out = stream(true);
    const printer = createRunPrinter(out);
    printer.print({ type: 'episode-phase', id: 'e1', task: 'versions', phase: 'gate' });
    vi.advanceTimersByTime(61_000);
    expect(out.text.some((l) => l.includes('still running'))).toBe(false);
    printer.finish();
  });
});
