import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEpisodeRecord, type EpisodeRecord } from '../../../src/ledger/episode-record.js';
import { ledgerOf } from '../../../src/ledger/git-ledger.js';
import { startServer, type RunningServer } from '../../../src/server/start-server.js';
import { makeWorld } from '../../helpers/world-fixture.js';
import { countPixels, itWithBrowser, launchChromium } from './browser.js';

const SHOTS = join(import.meta.dirname, '../../test-artifacts/dashboard');
const describeBrowser = itWithBrowser() === it ? describe : describe.skip;

const T0 = Date.parse('2026-03-01T10:00:00.000Z');

/** A final record as a run leaves it: started at `from` seconds, its phases in milliseconds. */
function episode(id: string, task: string, worker: string, from: number, to: number, phases: Record<string, number>): EpisodeRecord {
  const open = openEpisodeRecord({ id, world: 'w', task, attempt: 1, base: 'b', agent: 'script', worker });
  return {
    ...open,
    startedAt: new Date(T0 + from * 1000).toISOString(),
    endedAt: new Date(T0 + to * 1000).toISOString(),
    status: 'final',
    outcome: 'accepted',
    phases,
  };
}

describeBrowser('the episode timeline in a browser', () => {
  let root = '';
  let server: RunningServer;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    const { world } = await makeWorld({ recording: {}, sandbox: 'none' });
    root = join(world.path, '..');
    const ledger = ledgerOf(world);
    // host-a ran two episodes at once (two slots); host-b's gate took two minutes.
    await ledger.write(
      episode('20260301-100000-000-aaaaaa', 'a', 'host-a:10', 0, 60, { workspace: 1000, agent: 30_000, collect: 1000, gate: 8000, integrate: 5000 }),
    );
    await ledger.write(episode('20260301-100010-000-bbbbbb', 'b', 'host-a:10', 10, 50, { agent: 25_000, gate: 6000, integrate: 4000 }));
    await ledger.write(episode('20260301-100100-000-cccccc', 'c', 'host-a:10', 61, 90, { agent: 20_000, gate: 5000, integrate: 3000 }));
    await ledger.write(episode('20260301-100005-000-dddddd', 'd', 'host-b:20', 5, 180, { agent: 20_000, gate: 120_000, integrate: 10_000 }));
    server = await startServer({ world, port: 0, pollMs: 200 });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1360, height: 900 } });
    await mkdir(SHOTS, { recursive: true });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('draws a row per worker slot, a bar per episode in the four phase colours, a long gate as a long bar', async () => {
    await page.goto(`${server.url}#/episodes`);
    await page.locator('main[data-state="ready"][data-view="episodes"]').waitFor({ timeout: 10_000 });
    const svg = page.locator('svg.episode-timeline');
    const slots = svg.locator('g.slot');
    expect(await slots.evaluateAll((gs) => gs.map((g) => `${g.getAttribute('data-host')} #${g.getAttribute('data-slot')}`))).toEqual([
      'host-a #1',
      'host-a #2',
      'host-b #1',
    ]);
    const tasksIn = (i: number) =>
      slots
        .nth(i)
        .locator('g.episode')
        .evaluateAll((gs) => gs.map((g) => g.getAttribute('data-task')));
    expect([await tasksIn(0), await tasksIn(1), await tasksIn(2)]).toEqual([['a', 'c'], ['b'], ['d']]);
    expect(await slots.nth(0).locator('.label').textContent()).toBe('host-a #1');

    const shot = await svg.screenshot({ path: join(SHOTS, 'episode-timeline.png') });
    expect(shot.length).toBeGreaterThan(1000);

    // Each phase has a colour of its own, the same wherever it is drawn.
    const bar = (task: string, phase: string) => svg.locator(`g.episode[data-task="${task}"] rect[data-phase="${phase}"]`);
    const fill = (task: string, phase: string) => bar(task, phase).evaluate((r) => (globalThis as any).getComputedStyle(r).fill as string);
    const colours = await Promise.all(['agent', 'gate', 'waiting', 'integration'].map((p) => fill('a', p)));
    expect(new Set(colours).size).toBe(4);
    expect(await fill('d', 'gate')).toBe(colours[1]);
    expect(await fill('d', 'agent')).toBe(colours[0]);
    // The screenshot shows every phase in its colour, and more of the gate's than of any other (d's two-minute gate).
    const shown = await Promise.all(colours.map((c) => countPixels(page, shot, c)));
    for (const n of shown) expect(n).toBeGreaterThan(50);
    expect(shown[1]).toBe(Math.max(...shown));

    // Bars lie end to end in phase order, inside the picture, and a two-minute gate is drawn long.
    const box = async (task: string, phase: string) => (await bar(task, phase).boundingBox())!;
    const picture = (await svg.boundingBox())!;
    const d = await Promise.all(['agent', 'gate', 'waiting', 'integration'].map((p) => box('d', p)));
    for (let i = 1; i < d.length; i++) expect(d[i]!.x).toBeGreaterThanOrEqual(d[i - 1]!.x + d[i - 1]!.width - 1);
    expect(d[3]!.x + d[3]!.width).toBeLessThanOrEqual(picture.x + picture.width + 1);
    const longGate = d[1]!.width;
    expect(longGate).toBeGreaterThan(5 * d[0]!.width);
    expect(longGate).toBeGreaterThan(10 * (await box('a', 'gate')).width);
    // Overlapping episodes of one worker sit in different rows; one that starts later sits to the right.
    expect((await box('b', 'agent')).y).toBeGreaterThan((await box('a', 'agent')).y);
    expect((await box('c', 'agent')).x).toBeGreaterThan((await box('a', 'integration')).x);
    // The legend names the four phases.
    expect(await page.locator('.legend .swatch').count()).toBe(4);
  });
});
