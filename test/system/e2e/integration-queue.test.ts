import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startServer } from '../../../src/server/start-server.js';
import { gitValue } from '../../../src/git/git.js';
import { LocalWorld } from '../../../src/world/local-world.js';
import { startCli } from '../../helpers/cli-process.js';
import { itWith } from '../../helpers/services.js';
import { slowGateSeed } from '../../helpers/slow-gate-world.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { itWithBrowser, launchChromium } from './browser.js';

const SHOTS = join(import.meta.dirname, '../../test-artifacts/dashboard');
const runs = itWith('bwrap') === it && itWithBrowser() === it;
const describeE2e = runs ? describe : describe.skip;

/** The DOM as this function uses it, in the page (the test's tsconfig has no DOM types). */
interface Found {
  innerText: string;
  closest(selector: string): Found | null;
  getAttribute(name: string): string | null;
}

/** Runs in the page: the first row being judged on its tip (its own gate, or a verification) and whether the queue is a running scheduler's, or false. */
function readVerifyingRow(): { text: string; current: string | null } | false {
  const doc = (globalThis as unknown as { document: { querySelector(selector: string): Found | null } }).document;
  const row = doc.querySelector('main [data-stage="gating"], main [data-stage="verifying"]')?.closest('tr');
  return row ? { text: row.innerText, current: doc.querySelector('[data-queue-current]')?.getAttribute('data-queue-current') ?? null } : false;
}

describeE2e('the integration queue in a browser', () => {
  it('shows on the overview, while genesis run goes, each change being judged on its tip and what it sits on', async () => {
    const dir = await tempDir('genesis-queue-e2e-');
    const worldPath = join(dir, 'w.world');
    const init = startCli(['init', '--world', worldPath, '--from', await slowGateSeed(dir)]);
    expect(await init.exited, init.stderr()).toBe(0);
    const server = await startServer({ world: await LocalWorld.open(worldPath), port: 0, pollMs: 100 });
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1360, height: 900 } });
      const pageErrors: string[] = [];
      page.on('pageerror', (error) => pageErrors.push(error.message));
      await page.goto(`${server.url}#/`);
      await page.locator('main[data-state="ready"][data-view="overview"]').waitFor({ timeout: 10_000 });
      expect(await page.locator('main').innerText()).toContain('Integration queue (0)');

      const run = startCli(['run', '--world', worldPath, '--json']);
      // The page redraws on its own (live updates) as the queue moves.
      // Read in one go in the page: a redraw may replace the row at any moment.
      const seen = await page.waitForFunction(readVerifyingRow, null, { timeout: 90_000, polling: 50 });
      const { text, current } = (await seen.jsonValue()) as { text: string; current: string | null };
      await mkdir(SHOTS, { recursive: true });
      await page.screenshot({ path: join(SHOTS, 'integration-queue.png'), fullPage: true });
      expect(current).toBe('true');
      // The row names its task, says it is being verified and on top of what (the head or the change ahead), and its commit is real.
      expect(text).toMatch(/\bt\d\b/);
      expect(text).toMatch(/being verified|own gate runs on this commit/);
      expect(text).toMatch(/the accepted head|change t\d/);
      const commit = /([0-9a-f]{12})\s*$/.exec(text.trim())?.[1];
      expect(commit, text).toBeDefined();
      expect(await gitValue(['cat-file', '-t', commit!], { cwd: worldPath })).toBe('commit');
      expect(await run.exited, run.stderr()).toBe(0);
      await expect.poll(() => page.locator('main').innerText(), { timeout: 15_000 }).toContain('Nothing waits to land.');
      expect(await page.locator('main').innerText()).toContain('No run is going.');
      expect(pageErrors).toEqual([]);
    } finally {
      await browser.close();
      await server.close();
    }
  }, 180_000);
});
