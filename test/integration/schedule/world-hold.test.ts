import { describe, expect, it } from 'vitest';
import { formatRunEvent } from '../../../src/cli/run-reporter.js';
import { describeWorldHold, readWorldHold, writeWorldHold } from '../../../src/schedule/run/carry-out/world-hold.js';
import { tempDir } from '../../helpers/temp-dir.js';

describe("the world's hold by a usage limit, as status and the dashboard read it", () => {
  it('is read back while it holds, and no more once it has passed', async () => {
    const dir = await tempDir('genesis-hold-');
    const hold = { untilMs: Date.now() + 60_000, message: 'the usage limit is reached' };
    expect(await readWorldHold(dir)).toBeNull();
    await writeWorldHold(dir, hold);
    expect(await readWorldHold(dir)).toEqual(hold);
    expect(await readWorldHold(dir, hold.untilMs + 1)).toBeNull();
  });

  it('says until when, how long, that it resumes by itself, and why, on the run output', () => {
    const now = Date.parse('2026-12-02T12:00:00Z');
    const hold = { untilMs: now + 90_000, message: 'the endpoint answered 429' };
    expect(describeWorldHold(hold, now)).toBe('held until 2026-12-02T12:01:30.000Z (in 90s), then it resumes by itself: the endpoint answered 429');
    expect(formatRunEvent({ type: 'hold', ...hold })).toContain('⏸ the world is held until 2026-12-02T12:01:30.000Z');
  });
});
