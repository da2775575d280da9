import { describe, expect, it } from 'vitest';
import { LiveWaits, readLiveWaits } from '../../../src/schedule/live-waits.js';
import { endWait, tellWait } from '../../../src/schedule/run/carry-out/waits.js';
import type { RunEvent } from '../../../src/schedule/run/ports/events.js';
import type { Run } from '../../../src/schedule/run/ports/state.js';
import { tempDir } from '../../helpers/temp-dir.js';

/** The two fields of a run the wait rule works through, wired as openRun wires them: every wait told is kept in the scratch dir. */
async function runWithWaits(): Promise<{ run: Run; told: RunEvent[]; dir: string; waits: LiveWaits }> {
  const dir = await tempDir('genesis-waits-');
  const waits = new LiveWaits(dir);
  const told: RunEvent[] = [];
  const emit = (event: RunEvent) => {
    if (event.type === 'wait') waits.note(event.id, event.task, event.what);
    told.push(event);
  };
  return { run: { waits, emit } as unknown as Run, told, dir, waits };
}

describe("the rule for a run's own waits", () => {
  it('tells a wait once while it lasts, and its end once', async () => {
    const { run, told, waits } = await runWithWaits();
    tellWait(run, 'e1:lease', 'a', 'the lease of its paths');
    tellWait(run, 'e1:lease', 'a', 'the lease of its paths');
    expect(told).toEqual([{ type: 'wait', id: 'e1:lease', task: 'a', what: 'the lease of its paths' }]);
    // Its writes are done before the scratch dir goes.
    await waits.clear();
  });

  it('ends only a wait it told, with the task it was told with', async () => {
    const { run, told, waits } = await runWithWaits();
    endWait(run, 'e2:worker');
    expect(told).toEqual([]);
    tellWait(run, 'e2:worker', 'b', 'a free worker');
    endWait(run, 'e2:worker');
    endWait(run, 'e2:worker');
    expect(told).toEqual([
      { type: 'wait', id: 'e2:worker', task: 'b', what: 'a free worker' },
      { type: 'wait', id: 'e2:worker', task: 'b', what: null },
    ]);
    await waits.clear();
  });

  it('keeps what it told where genesis status reads it', async () => {
    const { run, dir, waits } = await runWithWaits();
    tellWait(run, 'e3:lease', 'c', 'the lease of its paths');
    await expect.poll(() => readLiveWaits(dir).then((w) => w.map((x) => [x.id, x.task, x.what]))).toEqual([['e3:lease', 'c', 'the lease of its paths']]);
    await waits.clear();
  });
});
