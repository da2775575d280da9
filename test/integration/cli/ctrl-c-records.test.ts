import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { bwrapAnswers } from '../../helpers/services.js';
import { baseManifest, makeWorld } from '../../helpers/world-fixture.js';

const BIN = fileURLToPath(new URL('../../../bin/genesis.js', import.meta.url));

// One world whose agents never finish by themselves: two episodes are running whenever a run is.
let world = '';
beforeAll(async () => {
  if (!bwrapAnswers()) return;
  const built = await makeWorld({
    sandbox: 'bwrap',
    manifest: baseManifest({ agent: { kind: 'command', command: ['sh', '-c', 'sleep 60'], sandbox: 'none', timeoutSec: 120 } }),
    recording: {},
  });
  world = join(await mkdtemp(join(tmpdir(), 'genesis-ctrl-c-')), 'w.world');
  await cp(built.world.path, world, { recursive: true });
}, 60_000);

afterAll(async () => {
  if (world) await rm(join(world, '..'), { recursive: true, force: true });
});

const running = async () => (await new GitLedger(world).readAll()).filter((r) => r.status === 'running').length;

async function untilTwoRun(child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  while ((await running()) < 2) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error('the run did not start two episodes');
    await new Promise((r) => setTimeout(r, 200));
  }
}

const exitOf = (child: ChildProcess) => new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));

/** `genesis run` with stdout as given, stopped by one SIGINT once two episodes run (`after` runs right after it). */
async function interrupt(stdout: 'pipe' | number, after: (child: ChildProcess) => void = () => undefined): Promise<number | null> {
  const child = spawn(process.execPath, [BIN, 'run', '--world', world, '--sandbox', 'bwrap'], { stdio: ['ignore', stdout, 'ignore'] });
  const exited = exitOf(child);
  try {
    await untilTwoRun(child);
    child.kill('SIGINT');
    after(child);
    return await exited;
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
}

describe.skipIf(!bwrapAnswers())('one Ctrl-C on genesis run', () => {
  it('records every running episode and exits 5 when the pipe stdout goes into closes with it (genesis run | tee log)', async () => {
    // Ctrl-C reaches tee too: its end of the pipe closes right after the signal, as here.
    const code = await interrupt('pipe', (child) => child.stdout!.destroy());
    expect({ code, running: await running() }).toEqual({ code: 5, running: 0 });
  }, 90_000);

  it('records every running episode and exits 5 when stdout is a file', async () => {
    const fd = openSync(join(world, '..', 'run.log'), 'w');
    try {
      const code = await interrupt(fd);
      expect({ code, running: await running() }).toEqual({ code: 5, running: 0 });
    } finally {
      closeSync(fd);
    }
  }, 90_000);

  it('still quits at once on a second Ctrl-C, leaving the episodes to the next run', async () => {
    const code = await interrupt('pipe', (child) => setTimeout(() => child.kill('SIGINT'), 50));
    expect(code).toBe(130);
  }, 90_000);
});
