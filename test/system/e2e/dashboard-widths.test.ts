import { cp, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addBudgetLift } from '../../../src/ledger/budget-lifts.js';
import { openEpisodeRecord, type EpisodeRecord } from '../../../src/ledger/episode-record.js';
import { ledgerOf } from '../../../src/ledger/git-ledger.js';
import { startServer, type RunningServer } from '../../../src/server/start-server.js';
import { LocalWorld } from '../../../src/world/local-world.js';
import { baseManifest, makeWorld } from '../../helpers/world-fixture.js';
import { itWithBrowser, launchChromium } from './browser.js';

/** Screenshots for people to look at; the assertions measure the DOM, not the pictures. */
const SHOTS = join(process.env.GENESIS_TEST_ARTIFACTS ?? join(tmpdir(), 'genesis-test-artifacts'), 'dashboard-widths');
const WIDTHS = [1280, 1400, 1920];
const describeBrowser = itWithBrowser() === it ? describe : describe.skip;

// The night began an hour ago, so the episodes running now are minutes old.
const T0 = Date.now() - 3_100_000;
const HOST = hostname();
const CLOUD = 'ip-10-0-12-34.eu-west-1.compute.internal';
const SHA = (n: number) => `${n}`.repeat(40).slice(0, 40);

/** A record as a run leaves it: ids, agents and messages as long as real ones. */
const attempts = new Map<string, number>();

function episode(seq: number, task: string, worker: string, from: number, to: number | null, end: Partial<EpisodeRecord> = {}): EpisodeRecord {
  const id = `20260301-22${String(from).padStart(4, '0')}-000-${seq.toString(16).padStart(6, 'a')}`;
  const attempt = (attempts.get(task) ?? 0) + 1;
  attempts.set(task, attempt);
  const open = openEpisodeRecord({ id, world: 'w', task, attempt, base: SHA(1), agent: 'claude-code:claude-sonnet-4-5-20250929', worker });
  if (to === null) return { ...open, startedAt: new Date(T0 + from * 1000).toISOString() };
  return {
    ...open,
    startedAt: new Date(T0 + from * 1000).toISOString(),
    endedAt: new Date(T0 + to * 1000).toISOString(),
    status: 'final',
    outcome: 'rejected',
    reason: 'test-failed',
    // A pytest node id, as a reason names a failing test: one word with nowhere to break.
    message: 'the gate failed: 3 of 41 tests failed: tests/parser/test_expressions.py::test_parses_nested_ternaries_with_comments_in_between',
    signature: 'test/parser/expressions.test.ts::parses nested ternaries with comments in between',
    phases: { agent: (to - from) * 600, gate: (to - from) * 300 },
    usage: { inputTokens: 1_234_567, outputTokens: 23_456, costUsd: 4.87 },
    ...end,
  };
}

/**
 * Looks for what does not read well, in the page itself: the page scrolling sideways, any element
 * sticking out of the card (panel, task card, banner) it sits in, an id or commit that wraps onto a
 * second line (a task's id in a table included). Wide pictures scroll inside their own box (.graph-scroll) and are checked as that
 * box. A string, as the tests typecheck without the DOM.
 */
const MEASURE = `(() => {
  const problems = [];
  const name = (el) => el.tagName.toLowerCase() + (el.className && typeof el.className === 'string' ? '.' + el.className.trim().split(/\\s+/).join('.') : '') + ' "' + (el.textContent || '').trim().slice(0, 40) + '"';
  const page = document.documentElement;
  if (page.scrollWidth > page.clientWidth + 1) problems.push('the page scrolls sideways: ' + page.scrollWidth + ' px in ' + page.clientWidth);
  for (const card of document.querySelectorAll('main .panel, main .card, main .banner')) {
    const box = card.getBoundingClientRect();
    for (const el of card.querySelectorAll('*')) {
      const scroller = el.parentElement && el.parentElement.closest('.graph-scroll');
      if (scroller && card.contains(scroller)) continue;
      const r = el.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) continue;
      if (r.right > box.right + 1 || r.left < box.left - 1) problems.push(name(el) + ' at ' + Math.round(r.left) + '–' + Math.round(r.right) + ' px leaves ' + name(card) + ' at ' + Math.round(box.left) + '–' + Math.round(box.right));
    }
  }
  for (const el of document.querySelectorAll('main .mono, main .id, main td > a')) {
    const lines = el.getClientRects().length;
    if (lines > 1 && !el.closest('pre')) problems.push(name(el) + ' wraps onto ' + lines + ' lines');
  }
  return problems;
})()`;

describeBrowser('the dashboard at 1280, 1400 and 1920 px', () => {
  let root = '';
  let server: RunningServer;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    const tasks = ['parser', 'printer', 'lexer', 'cli', 'docs'].map((id) => ({ id, title: `the ${id}`, paths: [`src/${id}.js`] }));
    const { world } = await makeWorld({
      manifest: baseManifest({ tasks, retry: { maxAttempts: 5 }, goal: { outcome: 'a parser and a printer', stop: { maxEpisodes: 8 } } }),
      recording: {},
      sandbox: 'none',
    });
    const ledger = ledgerOf(world);
    // A night of three `genesis run`s with two slots each on this machine (each restart a new pid),
    // then the fourth, this process, running two episodes now. Nothing landed yet: 0 of 5 done.
    const runs = [`${HOST}:41001`, `${HOST}:41002`, `${HOST}:41003`];
    let seq = 0;
    for (const [i, worker] of runs.entries()) {
      const t = i * 1000;
      await ledger.write(episode(++seq, 'parser', worker, t, t + 400));
      await ledger.write(
        episode(++seq, 'printer', worker, t + 10, t + 600, { outcome: 'accepted', reason: null, message: null, signature: null, commit: SHA(seq) }),
      );
      await ledger.write(episode(++seq, 'lexer', worker, t + 420, t + 900, { outcome: 'failed', reason: 'agent-exit' }));
    }
    const me = `${HOST}:${process.pid}`;
    await ledger.write(episode(++seq, 'parser', me, 3000, null));
    await ledger.write(episode(++seq, 'cli', me, 3010, null));
    // And a fleet worker on a cloud machine, with the long name such machines have.
    await ledger.write(episode(++seq, 'docs', `${CLOUD}:48213:k3x9zq`, 3020, null));
    // The night ran into its episode budget twice, and was lifted twice, as `genesis budget lift` does.
    for (const n of [2, 3]) await addBudgetLift(world.path, { by: 'test', reason: 'the parser needs more tries', raise: { maxEpisodes: n } });
    // makeWorld's folder goes when the first test ends; the walk needs a copy that outlives it.
    root = await mkdtemp(join(tmpdir(), 'genesis-dashboard-widths-'));
    await cp(world.path, join(root, 'w.world'), { recursive: true });
    server = await startServer({ world: await LocalWorld.open(join(root, 'w.world')), port: 0, pollMs: 200 });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await mkdir(SHOTS, { recursive: true });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  async function open(width: number, hash: string, view: string): Promise<string[]> {
    await page.setViewportSize({ width, height: 900 });
    await page.goto(`${server.url}${hash}`);
    await page.locator(`main[data-state="ready"][data-view="${view}"]`).waitFor({ timeout: 10_000 });
    await page.screenshot({ path: join(SHOTS, `${view}-${width}.png`), fullPage: true });
    return page.evaluate(MEASURE);
  }

  for (const width of WIDTHS) {
    describe(`at ${width} px`, () => {
      it('shows the overview with nothing out of its card, and a tasks bar whose fill is the done fraction', async () => {
        expect(await open(width, '#/', 'overview')).toEqual([]);
        expect(await page.locator('main').innerText()).toContain('0 of 5 done');
        const bar = page.locator('[data-progress="tasks"]');
        expect(await bar.getAttribute('aria-valuenow')).toBe('0');
        expect(await bar.getAttribute('aria-valuemax')).toBe('5');
        // Three tasks run, and nothing in the bar says so: running is not progress.
        const filled = await bar.locator('span').evaluateAll((spans) => spans.map((s) => s.getBoundingClientRect().width));
        expect(filled.reduce((a, b) => a + b, 0)).toBe(0);
        expect(await page.locator('main').innerText()).toMatch(/running\s+3/);
        // The budget's bar is what is used of what is in force, lifts included (as genesis budget says).
        const budget = page.locator('[data-budget="maxEpisodes"]');
        expect(await budget.innerText()).toContain('maxEpisodes 12 of 13 episodes (world.yaml 8, lifted 5)');
        const meter = budget.locator('.meter');
        const [whole, used] = [(await meter.boundingBox())!, (await meter.locator('span').boundingBox())!];
        expect(used.width / whole.width).toBeCloseTo(12 / 13, 2);
        // Spent, not progressed: near its end it is drawn in the warning colour, not the accent's blue.
        expect(await meter.getAttribute('class')).toBe('meter near');
      });

      it('draws one timeline row per slot of the machine across three restarts, and episode ids and commits on one line in the table', async () => {
        expect(await open(width, '#/episodes', 'episodes')).toEqual([]);
        const slots = page.locator('svg.episode-timeline g.slot');
        const rows = await slots.evaluateAll((gs) => gs.map((g) => `${g.getAttribute('data-host')} #${g.getAttribute('data-slot')}`));
        expect(rows.filter((r) => r.startsWith(`${HOST} `))).toEqual([`${HOST} #1`, `${HOST} #2`]);
        expect(rows.filter((r) => !r.startsWith(`${HOST} `))).toEqual([`${CLOUD} #1`]);
        // Twelve episodes from five processes, all on those three rows.
        const workers = await page.locator('svg.episode-timeline g.episode').evaluateAll((gs) => gs.map((g) => g.getAttribute('data-worker')));
        expect(workers).toHaveLength(12);
        expect(new Set(workers).size).toBe(5);
        // Every row's label ends before the first bar begins, the cloud machine's long name too.
        const labelsEnd = Math.max(...(await slots.locator('.label').evaluateAll((ts) => ts.map((t) => t.getBoundingClientRect().right))));
        const barsStart = Math.min(...(await slots.locator('rect').evaluateAll((rs) => rs.map((r) => r.getBoundingClientRect().left))));
        expect(labelsEnd).toBeLessThan(barsStart);
        // The whole timeline shows without scrolling its box.
        const scroller = page.locator('.graph-scroll').first();
        expect(await scroller.evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);
        // And takes the panel's width: a wider screen gives a longer time axis, not an empty margin.
        const [svgWidth, boxWidth] = await scroller.evaluate((el) => [el.firstElementChild!.getBoundingClientRect().width, el.clientWidth]);
        expect(svgWidth).toBeGreaterThan(boxWidth - 4);
        // The table's id and commit cells: one line each, inside the card (MEASURE checked every element; these are the ones that broke).
        const card = (await page.locator('main .panel', { has: page.locator('table') }).boundingBox())!;
        const ids = page.locator('tbody tr td:first-child a.mono');
        expect(await ids.count()).toBe(12);
        const lineHeights = await ids.evaluateAll((as) => as.map((a) => a.getClientRects().length));
        expect(new Set(lineHeights)).toEqual(new Set([1]));
        const commits = await page.locator('tbody tr td:last-child').evaluateAll((tds) => tds.map((td) => td.getBoundingClientRect().right));
        for (const right of commits) expect(right).toBeLessThanOrEqual(card.x + card.width);
        expect(await page.locator('tbody tr td:last-child .mono').count()).toBe(3);
      });

      it('shows the tasks, the history, the reviews, one episode and the reliability page with nothing out of its card', async () => {
        expect(await open(width, '#/tasks', 'tasks')).toEqual([]);
        expect(await open(width, '#/history', 'history')).toEqual([]);
        expect(await open(width, '#/reviews', 'reviews')).toEqual([]);
        expect(await open(width, '#/reliability', 'reliability')).toEqual([]);
        expect(await open(width, '#/episodes/20260301-220010-000-aaaaa2', 'episode')).toEqual([]);
      });
    });
  }
});
