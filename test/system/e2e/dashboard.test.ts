import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../../src/server/start-server.js';
import { readTaskRetries } from '../../../src/world/task-retries.js';
import { LocalWorld } from '../../../src/world/local-world.js';
import { itWith } from '../../helpers/services.js';
import { buildDashboardWorld, removeWorld } from '../../integration/server/dashboard-world.js';
import { countPixels, itWithBrowser, launchChromium } from './browser.js';

/** Screenshots of every page, for people to look at (gitignored; CI keeps them as artifacts). */
const SHOTS = join(import.meta.dirname, '../../test-artifacts/dashboard');

// One world, one server and one browser for the whole walk; the pages are visited in order, and
// the retry comes last because it changes the world.
const runs = itWith('docker') === it && itWithBrowser() === it;
const describeE2e = runs ? describe : describe.skip;

describeE2e('the dashboard in a browser', () => {
  let worldPath = '';
  let server: RunningServer;
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    worldPath = (await buildDashboardWorld()).path;
    server = await startServer({ world: await LocalWorld.open(worldPath), port: 0, pollMs: 200 });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1360, height: 900 } });
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') pageErrors.push(message.text());
    });
    await mkdir(SHOTS, { recursive: true });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    if (worldPath) await removeWorld(worldPath);
  });

  async function open(hash: string, view: string): Promise<void> {
    await page.goto(`${server.url}${hash}`);
    await page.locator(`main[data-state="ready"][data-view="${view}"]`).waitFor({ timeout: 10_000 });
  }

  const shoot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  const main = () => page.locator('main');

  it('shows on the overview that the run is blocked and why, with tasks and episodes counted', async () => {
    await open('#/', 'overview');
    await expect.poll(() => page.locator('.banner').innerText()).toContain('blocked');
    await expect.poll(() => page.locator('.banner').innerText()).toContain('a (check-failed), e (outside-paths)');
    const text = await main().innerText();
    expect(text).toContain('2 of 5 done');
    // The bar's fill is the done share and nothing else: two fifths of it, in the "done" colour.
    const bar = page.locator('[data-progress="tasks"]');
    const [whole, fill] = [(await bar.boundingBox())!, (await bar.locator('span').boundingBox())!];
    expect(fill.width / whole.width).toBeCloseTo(2 / 5, 2);
    expect(await bar.locator('span').count()).toBe(1);
    expect(text).toContain('7 episodes');
    expect(text).toContain('No budget set');
    await expect.poll(() => page.locator('#live').innerText()).toBe('live');
    await shoot('overview');
  });

  it('shows the accepted history as a timeline with task, attempt, agent and gate summary', async () => {
    await open('#/history', 'history');
    const items = page.locator('.timeline li');
    expect(await items.count()).toBe(3);
    const b = items.nth(1);
    await expect.poll(() => b.innerText()).toContain('b: module b');
    await expect.poll(() => b.innerText()).toContain('attempt 2');
    await expect.poll(() => b.innerText()).toContain('agent script');
    await expect.poll(() => b.locator('.gate').innerText()).toContain('check:b ok');
    // What the change took: b's failed first attempt and the one that landed (the script agent reports no cost).
    await expect.poll(() => b.locator('.spend').innerText()).toMatch(/^2 episodes · agent .+ · gate .+ · landed after .+$/);
    // Each commit is labelled by what made it: the root by genesis init, not every commit without a task.
    expect(await items.nth(2).getAttribute('data-made')).toBe('init');
    expect(await items.nth(2).locator('.subject').innerText()).toContain("(the world's first commit, genesis init)");
    expect(await b.locator('.subject').innerText()).not.toContain('first commit');
    await shoot('history');
  });

  it('lists every episode and filters them by outcome and task', async () => {
    await open('#/episodes', 'episodes');
    expect(await page.locator('tbody tr').count()).toBe(7);
    await page.selectOption('select[name="outcome"]', 'rejected');
    await expect.poll(() => page.locator('tbody tr').count()).toBe(4);
    expect(page.url()).toContain('outcome=rejected');
    await page.selectOption('select[name="task"]', 'a');
    await expect.poll(() => page.locator('tbody tr').count()).toBe(2);
    await expect.poll(() => page.locator('tbody tr').first().innerText()).toContain('check-failed');
    await shoot('episodes-filtered');
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await expect.poll(() => page.locator('tbody tr').count()).toBe(7);
    await shoot('episodes');
  });

  it('opens an episode with the reason, prompt, agent log, diff and gate log', async () => {
    await open('#/episodes?task=a', 'episodes');
    await page.locator('tbody tr a.mono').first().click();
    await page.locator('main[data-state="ready"][data-view="episode"]').waitFor();
    await expect.poll(() => page.locator('.reason-box').innerText()).toContain('Rejected: check-failed');
    await expect.poll(() => page.locator('.reason-box').innerText()).toContain('failure signature');
    await expect.poll(() => page.locator('[data-section="Prompt"]').innerText()).toContain('module a');
    await expect.poll(() => page.locator('[data-section="Agent log"]').innerText()).toContain('writing a (wrongly)');
    await expect.poll(() => page.locator('[data-section="Diff"] .add').first().innerText()).toContain("+export const a = () => 'not a';");
    await expect.poll(() => page.locator('[data-section="Gate log"]').innerText()).toContain('a says a');
    await shoot('episode');
  });

  it('shows p, the horizons and both charts on the reliability page', async () => {
    await open('#/reliability', 'reliability');
    await expect.poll(() => page.locator('[data-stat="p"]').innerText()).toBe('28.6%');
    expect(await page.locator('svg.chart').count()).toBe(2);
    expect(await page.locator('svg.chart').nth(1).locator('circle').count()).toBeGreaterThan(1);
    const text = await main().innerText();
    expect(text).toContain('Horizons');
    expect(text).toContain('outside-paths');
    await shoot('reliability');
  });

  it('draws the task graph: each task in its state with its attempts, an arrow from each dependency', async () => {
    await open('#/tasks', 'tasks');
    const graph = page.locator('svg.task-graph');
    const node = (id: string) => graph.locator(`g.node[data-task="${id}"]`);
    expect(await graph.locator('g.node').count()).toBe(5);
    expect(await node('a').getAttribute('data-state')).toBe('blocked');
    expect(await node('b').getAttribute('data-state')).toBe('done');
    expect(await node('d').getAttribute('data-state')).toBe('pending');
    expect(await node('a').locator('.detail').textContent()).toBe('blocked · 2 attempts');
    expect(await node('b').locator('.detail').textContent()).toBe('done · 2 attempts');
    expect(await node('d').locator('.detail').textContent()).toBe('pending · 0 attempts');
    expect((await graph.locator('path.edge').evaluateAll((edges) => edges.map((e) => e.getAttribute('data-edge')))).sort()).toEqual(['a->d', 'b->c']);
    // The picture shows every box whole, each dependent to the right of what it waits for, the blocked one in the "bad" colour.
    const shot = await graph.screenshot({ path: join(SHOTS, 'task-graph.png') });
    expect(shot.length).toBeGreaterThan(1000);
    const box = (await graph.boundingBox())!;
    const boxes = Object.fromEntries(await Promise.all(['a', 'b', 'c', 'd', 'e'].map(async (id) => [id, (await node(id).boundingBox())!] as const)));
    for (const b of Object.values(boxes)) {
      expect(b.x).toBeGreaterThanOrEqual(box.x - 1);
      expect(b.x + b.width).toBeLessThanOrEqual(box.x + box.width + 1);
      expect(b.y + b.height).toBeLessThanOrEqual(box.y + box.height + 1);
    }
    expect(boxes.d!.x).toBeGreaterThan(boxes.a!.x + boxes.a!.width);
    expect(boxes.c!.x).toBeGreaterThan(boxes.b!.x + boxes.b!.width);
    const fill = (id: string) =>
      node(id)
        .locator('rect')
        .evaluate((r) => (globalThis as any).getComputedStyle(r).fill as string);
    expect(await fill('a')).toBe('rgb(251, 228, 226)');
    expect(await fill('b')).toBe('rgb(227, 244, 234)');
    // The picture itself shows them: the blocked box's colour and the done boxes' (b and c), each a box's worth of pixels.
    const blockedPixels = await countPixels(page, shot, await fill('a'));
    const donePixels = await countPixels(page, shot, await fill('b'));
    const boxPixels = boxes.a!.width * boxes.a!.height;
    expect(blockedPixels).toBeGreaterThan(boxPixels / 2);
    expect(donePixels).toBeGreaterThan(boxPixels);
  });

  it('shows each blocked task with its reason and queues it for retry with the Retry button', async () => {
    await open('#/tasks', 'tasks');
    const blocked = page.locator('[data-column="blocked"]');
    const a = blocked.locator('[data-task="a"]');
    await expect.poll(() => a.innerText()).toContain('check-failed');
    expect((await a.locator('.sig').innerText()).trim()).not.toBe('');
    expect(await a.locator('.spend').innerText()).toMatch(/^2 episodes · agent /);
    await expect.poll(() => blocked.locator('[data-task="e"]').innerText()).toContain('outside-paths');
    await expect.poll(() => page.locator('[data-column="pending"] [data-task="d"]').innerText()).toContain('waiting on blocked task a');
    await shoot('tasks');

    await a.locator('input[name="note"]').fill('the fixture of a was fixed');
    await a.getByRole('button', { name: 'Retry' }).click();
    const queued = page.locator('[data-column="pending"] [data-task="a"]');
    await expect.poll(() => queued.innerText()).toContain('queued for retry');
    await expect.poll(() => queued.innerText()).toContain('the fixture of a was fixed');
    await expect.poll(() => page.locator('[data-column="blocked"] [data-task="a"]').count()).toBe(0);
    expect(await readTaskRetries(worldPath)).toMatchObject([{ task: 'a', note: 'the fixture of a was fixed' }]);
    await shoot('tasks-after-retry');
  });

  it('reopens a done task with the reason given, from the tasks page', async () => {
    await open('#/tasks', 'tasks');
    const b = page.locator('[data-column="done"] [data-task="b"]');
    await b.locator('input[name="reason"]').fill('its acceptance test got stricter');
    await b.getByRole('button', { name: 'Reopen' }).click();
    const reopened = page.locator('[data-column="pending"] [data-task="b"]');
    await expect.poll(() => reopened.innerText()).toContain('its acceptance test got stricter');
    await expect.poll(() => reopened.innerText()).toMatch(/reopened /);
    expect(await page.locator('[data-column="done"] [data-task="b"]').count()).toBe(0);
    expect(await (await LocalWorld.open(worldPath)).doneTasks('main')).not.toContain('b');
    await shoot('tasks-after-reopen');
  });

  it('updates an open page by itself when the world changes', async () => {
    await open('#/', 'overview');
    await expect.poll(() => page.locator('.banner').innerText()).toContain('idle');
    // Another person retries e through the API while this page stays open.
    const response = await fetch(`${server.url}api/tasks/e/retry`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(response.status).toBe(201);
    await expect.poll(() => main().innerText(), { timeout: 5_000 }).toContain('queued for retry 2');
    expect(pageErrors).toEqual([]);
  });
});
