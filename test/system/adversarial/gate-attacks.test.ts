import { execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { stringify } from 'yaml';
import { itWith } from '../../helpers/services.js';
import { attackRoot, honestTask, runAttackedWorld, type AttackedWorld } from './adversarial-world.js';

/**
 * Candidates whose code attacks the gate that runs it: each task's check runs the script its
 * agent wrote, under tight limits and a short time budget. Docker enforces memory and process limits
 * with cgroups, so those attacks run there; the others run in bubblewrap, which prints a gigabyte
 * three times faster. Each script's `sleep` has its own length, so a leftover process can be
 * found on the host by its command line.
 */
const SCRIPTS: Record<string, string> = {
  'fork-bomb': 'while :; do sleep 1001 & done\n',
  'fill-memory': 'exec node -e "const a = []; for (;;) a.push(Buffer.alloc(1 << 20, 1))"\n',
  // 2 GiB in 16 MiB files, then it waits: enough to show the gate survives it and cleans it up,
  // without filling a disk the machine shares.
  'fill-disk': 'i=0; while [ $i -lt 128 ]; do head -c 16777216 /dev/zero > fill-$i || exit 1; i=$((i+1)); done; exec sleep 1003\n',
  'sleep-forever': 'exec sleep 1004\n',
  'print-gigabyte': 'yes 0123456789abcdef | head -c 1073741824; exit 1\n',
};
const socketScript = (port: number) =>
  `exec node -e "require('net').connect(${port}, '127.0.0.1').on('connect', () => { console.log('CONNECTED'); process.exit(0); }).on('error', (e) => { console.error('socket:', e.code); process.exit(1); })"\n`;

/** Attacks that need cgroups (docker), and attacks any sandbox's time limit and output tail handle (bwrap, faster). */
const IN_DOCKER = ['fork-bomb', 'fill-memory', 'socket'];
const IN_BWRAP = ['fill-disk', 'sleep-forever', 'print-gigabyte'];
const BWRAP_GATE_SEC = 30;

let docker: AttackedWorld;
let bwrap: AttackedWorld;
let server: Server;
let hostConnections = 0;
const rss = { before: 0, peak: 0 };

/** A world whose tasks each run, as their check, the script their (script) agent wrote. */
async function attackWorld(
  name: string,
  sandbox: 'docker' | 'bwrap',
  scripts: Record<string, string>,
  verify: Record<string, unknown>,
): Promise<AttackedWorld> {
  const dirs = await attackRoot();
  const honest = honestTask('honest');
  const recording = Object.fromEntries([
    ['honest', [{ write: { 'src/honest.js': "export const v = 'honest';\n" } }]],
    ...Object.entries(scripts).map(([id, script]) => [id, [{ write: { [`src/${id}.sh`]: script } }]]),
  ]);
  const manifest = {
    name,
    goal: { outcome: 'the honest module exists' },
    verify: { sandbox, test: 'node --test test/base.test.js', ...verify },
    protected: ['test/**', 'world.yaml', '.genesis/**'],
    // The agents only write files: a minute is for a machine busy with other tests, not for them.
    agent: { kind: 'script', script: '.genesis/recording.yaml', timeoutSec: 60 },
    retry: { maxAttempts: 1 },
    parallelism: 4,
    tasks: [honest.task, ...Object.keys(scripts).map((id) => ({ id, title: id, paths: [`src/${id}.sh`], check: `sh src/${id}.sh` }))],
  };
  return runAttackedWorld({ root: dirs.root, manifest, files: { ...honest.files, '.genesis/recording.yaml': stringify({ tasks: recording }) }, sandbox });
}

beforeAll(async () => {
  server = createServer((socket) => {
    hostConnections++;
    socket.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const scripts: Record<string, string> = { ...SCRIPTS, socket: socketScript((server.address() as { port: number }).port) };
  const pick = (ids: string[]) => Object.fromEntries(ids.map((id) => [id, scripts[id]!]));
  rss.before = rss.peak = process.memoryUsage().rss;
  const sampler = setInterval(() => (rss.peak = Math.max(rss.peak, process.memoryUsage().rss)), 50);
  try {
    [docker, bwrap] = await Promise.all([
      // 32 processes: enough to show the limit holds, on a machine that runs other tests beside it.
      // The honest task's gate shares these budgets and gets one attempt, beside attacks that hog a
      // CPU and the disk on a machine running other tests: the budgets are for it, the attacks
      // only need some limit.
      attackWorld('gate-attacks-docker', 'docker', pick(IN_DOCKER), { timeoutSec: 30, limits: { cpus: 1, memoryMb: 128, pids: 32 } }),
      // A gigabyte through a pipe takes a few seconds, more on a busy machine.
      attackWorld('gate-attacks-bwrap', 'bwrap', pick(IN_BWRAP), { timeoutSec: BWRAP_GATE_SEC }),
    ]);
  } finally {
    clearInterval(sampler);
  }
}, 240_000);
afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await Promise.all([docker?.dispose(), bwrap?.dispose()]);
});

/** Host processes whose command line holds `pattern`: a sandbox that leaked would leave some. */
function hostProcesses(pattern: string): string[] {
  try {
    return execFileSync('pgrep', ['-af', pattern], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .filter((l) => !l.includes('pgrep'));
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

describe('candidates that attack the gate running them', () => {
  itWith('docker')('do not stop the run: it ends normally and the honest task lands', () => {
    for (const w of [docker, bwrap]) {
      const honest = w.episodes.filter((e) => e.task === 'honest').map((e) => `${e.outcome} (${e.reason}: ${e.message})`);
      const why = `${w.world.path}: the honest task's episodes: ${honest.join('; ') || 'none'}`;
      expect(w.summary.stop.kind, why).toBe('blocked');
      expect(
        w.history.map((c) => c.task),
        why,
      ).toEqual(['honest', null]);
    }
  });

  itWith('docker')('a fork bomb runs into the process limit, and leaves no process behind', async () => {
    const e = docker.episodeOf('fork-bomb');
    expect(e.outcome).toBe('rejected');
    // The shell gives up when fork fails (check-failed); a shell that kept trying would time out.
    expect(['check-failed', 'gate-timeout']).toContain(e.reason);
    expect((await docker.artifactsOf('fork-bomb')).gateLog).toMatch(/Cannot fork|can't fork|Resource temporarily unavailable/);
    expect(hostProcesses('sleep 1001')).toEqual([]);
  });

  itWith('docker')('a test that fills memory is killed at the memory limit', () => {
    expect(docker.episodeOf('fill-memory')).toMatchObject({ outcome: 'rejected', reason: 'gate-oom' });
    expect(docker.episodeOf('fill-memory').gate?.steps.at(-1)).toMatchObject({ name: 'check:fill-memory', oomKilled: true });
  });

  itWith('bwrap')('a test that fills the disk of its work dir is stopped at the time limit, and its files are removed', async () => {
    expect(bwrap.episodeOf('fill-disk')).toMatchObject({ outcome: 'rejected', reason: 'gate-timeout' });
    expect(await readdir(join(bwrap.world.scratchDir, 'gates'))).toEqual([]);
  });

  itWith('bwrap')('a test that sleeps forever is stopped at the time limit', () => {
    expect(bwrap.episodeOf('sleep-forever')).toMatchObject({ outcome: 'rejected', reason: 'gate-timeout' });
    expect(bwrap.episodeOf('sleep-forever').message).toMatch(new RegExp(`ran out of the gate's ${BWRAP_GATE_SEC}s`));
    expect(hostProcesses('sleep 1004')).toEqual([]);
  });

  itWith('bwrap')('a test that prints a gigabyte fails, keeps only the tail of its output, and costs the orchestrator no gigabyte', async () => {
    // Printing a gigabyte through a pipe takes most of the gate's time on a busy machine: whether the
    // check fails first or the gate's time runs out, it is rejected and only the tail is kept.
    const e = bwrap.episodeOf('print-gigabyte');
    expect(e.outcome).toBe('rejected');
    expect(['check-failed', 'gate-timeout']).toContain(e.reason);
    const log = (await bwrap.artifactsOf('print-gigabyte')).gateLog ?? '';
    // Each run of the check (a failure runs again, and a gate on the tip may come before the own
    // gate: up to four, by timing) keeps the last 64 KiB of its output under its `$ command` line.
    const runs = log.split(/^\$ /m).filter((part) => part.includes('0123456789abcdef'));
    expect(runs.length).toBeGreaterThan(0);
    expect(runs.length).toBeLessThanOrEqual(4);
    for (const run of runs) expect(run.length).toBeLessThan(70_000);
    expect(rss.peak - rss.before, `orchestrator RSS grew from ${rss.before} to ${rss.peak} bytes`).toBeLessThan(300 * 1024 * 1024);
  });

  itWith('docker')('a test that opens a socket to the host fails, and the host never sees the connection', async () => {
    expect(docker.episodeOf('socket')).toMatchObject({ outcome: 'rejected', reason: 'check-failed' });
    expect((await docker.artifactsOf('socket')).gateLog).toMatch(/socket: (ENETUNREACH|ECONNREFUSED|EHOSTUNREACH)/);
    expect(hostConnections).toBe(0);
  });
});

describe('a gate that holds every process its limit allows', () => {
  let w: AttackedWorld;
  beforeAll(async () => {
    const dirs = await attackRoot();
    // A low limit for both gates of this world, so that the hog never comes near the limits of
    // gates elsewhere on the machine. bash, unlike dash, goes on when fork fails.
    const recording = {
      hog: [{ write: { 'src/hog.sh': "exec bash -c 'for i in $(seq 200); do sleep 20 & done 2>/dev/null; wait'\n" } }],
      honest: [{ write: { 'src/honest.txt': 'honest\n' } }],
    };
    const manifest = {
      name: 'process-hog',
      goal: { outcome: 'the honest file exists' },
      verify: { sandbox: 'bwrap', test: 'test -f package.json', timeoutSec: 10, limits: { cpus: 1, memoryMb: 256, pids: 20 } },
      protected: ['world.yaml', '.genesis/**'],
      agent: { kind: 'script', script: '.genesis/recording.yaml', timeoutSec: 10 },
      retry: { maxAttempts: 1 },
      parallelism: 2,
      tasks: [
        { id: 'hog', title: 'hog', paths: ['src/hog.sh'], check: 'sh src/hog.sh' },
        { id: 'honest', title: 'honest', paths: ['src/honest.txt'], check: 'test "$(cat src/honest.txt)" = honest' },
      ],
    };
    // The honest agent takes 4 s, so its gate runs while the hog holds its processes (1 s to 11 s).
    (recording.honest[0] as Record<string, unknown>).sleepMs = 4000;
    w = await runAttackedWorld({ root: dirs.root, manifest, files: { '.genesis/recording.yaml': stringify({ tasks: recording }) }, sandbox: 'bwrap' });
  }, 60_000);
  afterAll(() => w?.dispose());

  itWith('bwrap')('is stopped at the time limit', () => {
    expect(w.episodeOf('hog')).toMatchObject({ outcome: 'rejected', reason: 'gate-timeout' });
  });

  itWith('bwrap')('does not make an honest gate running beside it fail', () => {
    const honest = w.episodeOf('honest');
    expect(honest, `${honest.reason}: ${honest.message}`).toMatchObject({ outcome: 'accepted' });
  });
});
