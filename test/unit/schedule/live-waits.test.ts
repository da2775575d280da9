import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LiveWaits, readLiveWaits } from '../../../src/schedule/live-waits.js';
import { tempDir } from '../../helpers/temp-dir.js';

describe('the waits a running scheduler keeps for status and the dashboard', () => {
  it('holds each wait from when it began, longest first, until it ends or the run clears them', async () => {
    const dir = await tempDir('genesis-waits-');
    const waits = new LiveWaits(dir);
    waits.note('e1', 'words', 'a dependency set being installed', 1000);
    waits.note('evidence', 'the run', 'the goal\'s evidence "npx vitest run" on 485ea462914b', 3000);
    // The same wait told again keeps when it began.
    waits.note('e1', 'words', 'a dependency set being installed', 4000);
    await waits.clear();
    expect(await readLiveWaits(dir)).toEqual([]);

    const again = new LiveWaits(dir);
    again.note('e1', 'words', 'a dependency set being installed', 1000);
    again.note('evidence', 'the run', "the goal's evidence", 3000);
    again.note('e1', 'words', 'a dependency set being installed', 4000);
    again.note('v1', 'slug', "the tip's test baseline", 5000);
    again.note('v1', 'slug', null, 6000);
    // Ending a wait nobody began writes nothing new.
    again.note('nobody', 'x', null, 7000);
    // Written in the background, in order: the last write holds both waits.
    await expect
      .poll(() => readLiveWaits(dir, 10_000))
      .toEqual([
        { id: 'e1', task: 'words', what: 'a dependency set being installed', sinceMs: 1000, ms: 9000 },
        { id: 'evidence', task: 'the run', what: "the goal's evidence", sinceMs: 3000, ms: 7000 },
      ]);
    await again.clear();
    expect(JSON.parse(await readFile(join(dir, 'waits.json'), 'utf8'))).toMatchObject({ waits: [] });
  });

  it('reads no wait where no run wrote any', async () => {
    expect(await readLiveWaits(await tempDir('genesis-waits-'))).toEqual([]);
  });
});
