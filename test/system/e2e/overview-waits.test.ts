import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LiveWaits, readLiveWaits } from '../../../src/schedule/live-waits.js';
import { startServer, type RunningServer } from '../../../src/server/start-server.js';
import { acquireRunLock } from '../../../src/world/run-lock.js';
import { makeWorld } from '../../helpers/world-fixture.js';
import { itWithBrowser, launchChromium } from './browser.js';

const describeBrowser = itWithBrowser() === it ? describe : describe.skip;

describeBrowser("the overview names the running scheduler's waits", () => {
  let root = '';
  let server: RunningServer;
  let browser: Browser;
  let page: Page;
  let release: () => Promise<void> = async () => undefined;
  let waits: LiveWaits;
  let scratch = '';

  beforeAll(async () => {
    const { world } = await makeWorld({ recording: {}, sandbox: 'none' });
    root = join(world.path, '..');
    // As a running genesis run has it: the world's run lock held, and its waits kept where the dashboard reads them.
    const lock = await acquireRunLock(world.scratchDir);
    release = () => lock.release();
    scratch = world.scratchDir;
    waits = new LiveWaits(scratch);
    await waits.clear();
    waits.note('e1', 'versions', 'dependency set b82a7419a6af being installed (npm ci --ignore-scripts)', Date.now() - 42_000);
    waits.note('evidence', 'the run', 'the goal\'s evidence "npx vitest run" on 485ea462914b', Date.now() - 7_000);
    server = await startServer({ world, port: 0, pollMs: 200 });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1360, height: 900 } });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await release();
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('each wait longer than a few seconds, longest first, with how long so far', async () => {
    // Too short to tell yet, as on genesis run's output: begun just now.
    waits.note('v1', 'slug', "the tip's test baseline");
    await expect.poll(async () => (await readLiveWaits(scratch)).length).toBe(3);
    await page.goto(`${server.url}#/`);
    await page.locator('main[data-state="ready"][data-view="overview"]').waitFor({ timeout: 10_000 });
    const items = page.locator('[data-waits] li');
    await expect.poll(() => items.count()).toBe(2);
    expect(await items.nth(0).innerText()).toMatch(
      /^versions waits for dependency set b82a7419a6af being installed \(npm ci --ignore-scripts\) \(\d+s so far\)$/,
    );
    expect(await items.nth(1).innerText()).toMatch(/^the run waits for the goal's evidence "npx vitest run" on 485ea462914b \(\d+s so far\)$/);
  });
});
