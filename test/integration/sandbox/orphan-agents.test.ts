import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect } from 'vitest';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { startCli } from '../../helpers/cli-process.js';
import { itWith } from '../../helpers/services.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { baseManifest, makeWorld } from '../../helpers/world-fixture.js';

/**
 * A real unsandboxed agent that would keep running: the first time it starts a child in its
 * process group, a daemon that leaves the group with setsid, and a sleep it waits on, and writes
 * every pid (its own, its parent's, its children's) to a file outside the workspace.
 */
function clingyAgent(pidFile: string): string[] {
  const script = [
    `if [ -e ${pidFile} ]; then echo "export const a = () => 'a';" > src/a.js; exit 0; fi`,
    'sleep 300 & child=$!',
    'setsid sleep 301 & daemon=$!',
    'sleep 302 & waited=$!',
    `echo "$$ $PPID $child $daemon $waited" > ${pidFile}.tmp && mv ${pidFile}.tmp ${pidFile}`,
    'wait $waited',
  ].join('\n');
  return ['sh', '-c', script];
}

async function world(pidFile: string) {
  const manifest = baseManifest({
    parallelism: 1,
    agent: { kind: 'command', command: clingyAgent(pidFile), sandbox: 'none', timeoutSec: 600 },
    tasks: [{ id: 'a', title: 'module a', paths: ['src/a.js'], check: 'node --test test/a.test.js' }],
  });
  return makeWorld({ sandbox: 'bwrap', manifest, recording: {} });
}

async function pidsIn(file: string): Promise<number[]> {
  for (let i = 0; i < 600; i++) {
    const text = await readFile(file, 'utf8').catch(() => '');
    if (text.trim()) return text.trim().split(' ').map(Number);
    await sleep(50);
  }
  throw new Error(`the agent never wrote ${file}`);
}

/** Alive and not a zombie waiting for a parent that does not reap it. */
async function alive(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  return stat !== null && stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
}

async function allDeadWithin(pids: number[], ms: number): Promise<number[]> {
  const until = Date.now() + ms;
  for (;;) {
    const left: number[] = [];
    for (const pid of pids) if (await alive(pid)) left.push(pid);
    if (left.length === 0 || Date.now() > until) return left;
    await sleep(50);
  }
}

describe('agents do not outlive the orchestrator', () => {
  itWith('bwrap')('kills an unsandboxed agent, its children and its setsid daemon when genesis run is killed with kill -9', async () => {
    const pidFile = join(await tempDir('genesis-orphans-'), 'pids');
    const f = await world(pidFile);
    const run = startCli(['run', '--world', f.world.path, '--sandbox', 'bwrap']);
    const pids = await pidsIn(pidFile);
    expect(await allDeadWithin(pids, 0)).toEqual(pids); // all running
    run.child.kill('SIGKILL');
    await run.exited;
    expect(await allDeadWithin(pids, 3000)).toEqual([]);
  });

  itWith('bwrap')('kills at the next start what an earlier run left behind, before closing its records, and then goes on', async () => {
    const pidFile = join(await tempDir('genesis-orphans-'), 'pids');
    const f = await world(pidFile);
    // A registry of this test's own: any other genesis starting on this machine meanwhile would clean up these orphans first.
    const env = { GENESIS_AGENT_REGISTRY: join(pidFile, '..', 'registry') };
    const first = startCli(['run', '--world', f.world.path, '--sandbox', 'bwrap'], env);
    const pids = await pidsIn(pidFile);
    const [agent, guard, ...children] = pids as [number, number, ...number[]];
    // The guard that would take the agent down with the run dies first (as if killed with it): the agent is orphaned for good.
    process.kill(guard, 'SIGKILL');
    first.child.kill('SIGKILL');
    await first.exited;
    await sleep(500);
    expect(await allDeadWithin([agent, ...children], 0)).toEqual([agent, ...children]);

    const second = startCli(['run', '--world', f.world.path, '--sandbox', 'bwrap'], env);
    expect(await second.exited, second.stderr()).toBe(0);
    expect(await allDeadWithin([agent, ...children], 0)).toEqual([]);
    const killed = second.lines.findIndex((l) => /killed \d+ agent process\(es\) an earlier genesis run left behind/.test(l));
    const closed = second.lines.findIndex((l) => /closed 1 episodes left running by an earlier run/.test(l));
    expect(killed, second.lines.join('\n')).toBeGreaterThanOrEqual(0);
    expect(closed).toBeGreaterThan(killed);
    expect((await new GitLedger(f.world.path).readAll()).map((e) => [e.outcome, e.reason])).toEqual([
      ['abandoned', 'orchestrator-stopped'],
      ['accepted', null],
    ]);
  });
});
