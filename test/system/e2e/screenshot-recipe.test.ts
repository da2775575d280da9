import { execFile } from 'node:child_process';
import { copyFile, mkdir, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEpisodeRecord } from '../../../src/ledger/episode-record.js';
import { ledgerOf } from '../../../src/ledger/git-ledger.js';
import { startServer, type RunningServer } from '../../../src/server/start-server.js';
import { makeWorld } from '../../helpers/world-fixture.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { countPixels, findChromium, itWithBrowser, launchChromium } from './browser.js';

const GUIDE = fileURLToPath(new URL('../../../docs/guides/dashboard.md', import.meta.url));
const SHOTS = join(process.env.GENESIS_TEST_ARTIFACTS ?? join(tmpdir(), 'genesis-test-artifacts'), 'screenshot-recipe');
const describeBrowser = itWithBrowser() === it ? describe : describe.skip;

/** The block the guide marks as its screenshot recipe (a fence whose info string is `sh screenshot-recipe`). */
async function recipe(): Promise<string> {
  const block = /^```sh screenshot-recipe\n([\s\S]*?)^```$/m.exec(await readFile(GUIDE, 'utf8'));
  if (!block) throw new Error(`${GUIDE} has no sh screenshot-recipe block`);
  return block[1]!;
}

describeBrowser("the dashboard guide's screenshot recipe", () => {
  let root = '';
  let server: RunningServer;
  let browser: Browser;

  beforeAll(async () => {
    const { world } = await makeWorld({ recording: {}, sandbox: 'none' });
    root = join(world.path, '..');
    const t0 = Date.now() - 600_000;
    for (const [i, task] of ['a', 'b'].entries()) {
      const open = openEpisodeRecord({ id: `20260301-10000${i}-000-abcdef`, world: 'w', task, attempt: 1, base: 'b', agent: 'script', worker: 'box:1' });
      await ledgerOf(world).write({
        ...open,
        startedAt: new Date(t0 + i * 60_000).toISOString(),
        endedAt: new Date(t0 + i * 60_000 + 200_000).toISOString(),
        status: 'final',
        outcome: 'accepted',
        phases: { agent: 120_000, gate: 60_000, integrate: 10_000 },
      });
    }
    server = await startServer({ world, port: 0, pollMs: 200 });
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('takes a picture of the rendered page, not of Loading…, and prints a DOM that says ready', async () => {
    const cwd = await tempDir('genesis-recipe-');
    // The block as printed, `chromium` found on PATH as a reader's shell finds it; only the address is this server's.
    const bin = join(cwd, '.bin');
    await mkdir(bin);
    await symlink(findChromium()!, join(bin, 'chromium'));
    const block = (await recipe()).replaceAll('http://127.0.0.1:4600/', server.url);
    expect(block).toContain(server.url);
    // Not spawnSync: the server answering chromium runs in this process.
    const r = await promisify(execFile)('sh', ['-e', '-c', block], {
      cwd,
      encoding: 'utf8',
      timeout: 120_000,
      env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}` },
    });

    // --dump-dom: the page finished drawing the episodes.
    const main = r.stdout.trim();
    expect(main).toMatch(/^<main [^>]*data-state="ready"/);
    expect(main).toContain('data-view="episodes"');

    // --screenshot: what the picture shows. Loading… is the grey page with one line of text; the
    // rendered page has its white cards and the timeline's bars in the agent's colour.
    const png = await readFile(join(cwd, 'episodes.png'));
    await mkdir(SHOTS, { recursive: true });
    await copyFile(join(cwd, 'episodes.png'), join(SHOTS, 'episodes.png'));
    const page = await browser.newPage();
    const white = await countPixels(page, png, 'rgb(255, 255, 255)');
    const agent = await countPixels(page, png, 'rgb(47, 91, 211)');
    expect(white).toBeGreaterThan(0.15 * 1400 * 900);
    expect(agent).toBeGreaterThan(500);
  });
});
