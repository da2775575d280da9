import { spawn } from 'node:child_process';
import { existsSync, openSync, closeSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findRunHolder } from '../../../audit/run-holder.js';
import { GenesisError } from '../../../errors/genesis-error.js';
import { outcomeResult } from '../../../operations/carry-out-steering.js';
import { steerWorld } from '../../../operations/steer-world.js';
import { createSandbox } from '../../../sandbox/create-sandbox.js';
import type { WorldControl } from '../../../server/world-control.js';
import { readRunLock } from '../../../world/run-lock.js';
import type { WorldRepo } from '../../../world/world-repo.js';
import type { WorldManifest } from '../../../manifest/schema.js';

const BIN = fileURLToPath(new URL('../../../../bin/genesis.js', import.meta.url));

/** Settings of {@link createWorldControl}. */
export interface WorldControlOptions {
  /** How long a started run may take to hold the world. @default 30000 */
  startTimeoutMs?: number;
  /** Extra arguments of `genesis run` (tests pick the sandbox). */
  runArgs?: string[];
}

/**
 * What `genesis serve` does for the API's run and task routes: a run is `genesis run --json` as a
 * child process of the server, detached so that it outlives neither its world's lock nor a
 * restart of the server (it keeps running when the server stops), with its output in
 * `serve-run.log` in the world's scratch dir; stop is SIGTERM to the run lock's holder on this
 * machine, which the run takes as Ctrl-C; a task is added through the gate as `genesis task add` does.
 */
export function createWorldControl(world: WorldRepo, options: WorldControlOptions = {}): WorldControl {
  return {
    runHolder: () => findRunHolder(world),
    async startRun({ pastEvidence }) {
      const held = await findRunHolder(world);
      if (held) throw new GenesisError('run-in-progress', `${held} holds this world`, { hint: 'POST /api/run/stop stops it' });
      if (!existsSync(BIN)) throw new GenesisError('internal', `the genesis program is not at ${BIN}`);
      const log = join(world.scratchDir, 'serve-run.log');
      const out = openSync(log, 'a');
      const args = [BIN, 'run', '--world', world.path, '--json', ...(pastEvidence ? ['--past-evidence'] : []), ...(options.runArgs ?? [])];
      const child = spawn(process.execPath, args, { detached: true, stdio: ['ignore', out, out], env: process.env });
      closeSync(out);
      child.unref();
      let exited: number | null = null;
      child.once('exit', (code) => {
        exited = code ?? -1;
      });
      const deadline = Date.now() + (options.startTimeoutMs ?? 30_000);
      for (;;) {
        const lock = await readRunLock(world.scratchDir);
        if (lock && child.pid !== undefined && lock.pid === child.pid) return { pid: child.pid!, holder: `genesis run on ${lock.host} (pid ${lock.pid})`, log };
        if (exited !== null || Date.now() > deadline) {
          const tail = readFileSync(log, 'utf8').trim().split('\n').slice(-5).join('\n');
          throw new GenesisError('run-not-started', `genesis run ${exited === null ? 'did not take the world in time' : `exited with ${exited}`}: ${tail}`, {
            hint: `its output is in ${log}`,
          });
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    async stopRun() {
      const lock = await readRunLock(world.scratchDir);
      if (!lock) throw new GenesisError('no-run', 'no genesis run holds this world', { hint: 'GET /api/run says whether one does' });
      if (!lock.here) {
        throw new GenesisError('run-held-elsewhere', `a genesis run on ${lock.host} (pid ${lock.pid}) holds this world`, { hint: 'stop it on that machine' });
      }
      process.kill(lock.pid, 'SIGTERM');
      return { pid: lock.pid, stopping: `genesis run on ${lock.host} (pid ${lock.pid})` };
    },
    // Between runs under the run lock; while a run goes on, through its scheduler (steerWorld), which starts the task when it is ready.
    addTask: async (spec) => {
      const request = { kind: 'add-task' as const, by: 'dashboard', task: spec };
      const sandboxFor = (m: WorldManifest) => createSandbox(m.verify.sandbox, { image: m.verify.image });
      return outcomeResult(await steerWorld(world, request, { what: `task ${String(spec.id)}`, sandboxFor }), 'add-task').commit;
    },
  };
}
