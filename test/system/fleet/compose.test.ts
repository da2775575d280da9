import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { execa } from 'execa';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import type { AuditReport } from '../../../src/audit/index.js';
import type { ClusterStatus } from '../../../src/queue/bullmq/cluster-status.js';
import { itWith } from '../../helpers/services.js';

/**
 * docker-compose.yml for real, as its header says to use it: the images from
 * sandboxes/build-images.sh (from Debian's packages here, from the registry where one answers),
 * Redis, the scheduler and three scaled workers, a world placed in the directory the compose file
 * shares with its containers, one worker container killed in the middle of an episode, then
 * `genesis audit` from the scheduler's image. Whichever compose is installed is used.
 */
const ROOT = resolve(import.meta.dirname, '../../..');
const TASKS = ['t1', 't2', 't3', 't4', 't5', 't6'];
const log = (line: string) => process.stderr.write(`[compose] ${line}\n`);

let compose: string[] = [];
let home = '';
let env: Record<string, string> = {};
let built = '';

/** `docker-compose` (Debian's 1.29) or `docker compose` (the plugin), whichever answers. */
function composeCommand(): string[] {
  for (const candidate of [['docker-compose'], ['docker', 'compose']]) {
    try {
      execFileSync(candidate[0]!, [...candidate.slice(1), 'version'], { stdio: 'ignore' });
      return candidate;
    } catch {
      // try the next one
    }
  }
  throw new Error('no docker compose here: run bash scripts/setup-services.sh');
}

async function run(args: string[], extra: Record<string, string> = {}, reject = true) {
  const started = Date.now();
  const result = await execa(compose[0]!, [...compose.slice(1), ...args], {
    cwd: ROOT,
    env: { ...env, ...extra },
    reject,
    stdin: 'ignore',
    all: true,
    timeout: 300_000,
  });
  log(`${[...compose, ...args].join(' ')} → exit ${result.exitCode} in ${((Date.now() - started) / 1000).toFixed(1)}s`);
  return result;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const port = (server.address() as { port: number }).port;
  await new Promise((done) => server.close(done));
  return port;
}

/** Tasks t1..t6, each writing one module after a few seconds (so a worker can be killed mid-episode). */
async function writeWorldSource(dir: string): Promise<void> {
  const files: Record<string, string> = {
    'package.json': '{ "type": "module" }\n',
    // The gate runs in an image of its own: the host's system directory (its dockerd) is not there.
    'test/base.test.js':
      "import test from 'node:test';\nimport assert from 'node:assert';\nimport { existsSync } from 'node:fs';\ntest('runs in an image of its own', () => assert.equal(existsSync('/usr/bin/dockerd'), false));\n",
    // The agent writes its module only when it runs confined (the default agent sandbox): as the
    // unprivileged user `agent` on a uid leased to it (never the worker's root), under the hostname
    // bubblewrap gives it, without the worker's Docker socket or its files.
    '.genesis/agent.sh':
      '#!/bin/bash\nset -e\n' +
      'if [ "$(id -u)" = 0 ] || [ "$(id -un)" != agent ] || [ "$(cat /proc/sys/kernel/hostname)" != agent ] || [ -e /var/run/docker.sock ] || [ -e /opt/genesis ]; then echo "not confined" >&2; exit 3; fi\n' +
      'sleep 4\nmkdir -p src\necho "export const v = \'$GENESIS_TASK_ID\';" > "src/$GENESIS_TASK_ID.js"\n',
    'world.yaml': stringify({
      name: 'fleet',
      goal: { outcome: 'modules t1..t6 exist' },
      verify: {
        sandbox: 'docker',
        image: 'genesis/node:20',
        test: 'node --test test/base.test.js',
        timeoutSec: 120,
        limits: { cpus: 1, memoryMb: 256, pids: 64 },
      },
      protected: ['test/**', 'world.yaml', '.genesis/**'],
      // No agent.sandbox: the default (auto) confines the agent inside the worker's container.
      agent: { kind: 'command', command: ['bash', '.genesis/agent.sh'], timeoutSec: 60 },
      // An agent that finds itself unconfined fails every attempt: its task is blocked, the world not done.
      retry: { maxAttempts: 3 },
      parallelism: 4,
      tasks: TASKS.map((t) => ({ id: t, title: `module ${t}`, paths: [`src/${t}.js`], check: `node --test test/${t}.test.js` })),
    }),
  };
  for (const t of TASKS)
    files[`test/${t}.test.js`] =
      `import test from 'node:test';\nimport assert from 'node:assert';\nimport { v } from '../src/${t}.js';\ntest('${t}', () => assert.equal(v, '${t}'));\n`;
  for (const [path, content] of Object.entries(files)) {
    await mkdir(join(dir, path, '..'), { recursive: true });
    await writeFile(join(dir, path), content, { mode: path.endsWith('.sh') ? 0o755 : 0o644 });
  }
}

beforeAll(async () => {
  compose = composeCommand();
  const build = await execa('bash', [join(ROOT, 'sandboxes/build-images.sh'), '--compose'], { all: true });
  log(build.all ?? '');
  built = /images:\s+from (\w+)/.exec(build.all ?? '')?.[1] ?? '';
  home = await mkdtemp('/var/tmp/genesis-compose-');
  // Workers notice a killed worker's episode within seconds, not BullMQ's default minute.
  await writeFile(
    join(home, 'fast-stalls.yml'),
    stringify({
      services: Object.fromEntries(['scheduler', 'worker'].map((s) => [s, { environment: { GENESIS_LOCK_MS: '3000', GENESIS_STALLED_MS: '2000' } }])),
    }),
  );
  const files = ['docker-compose.yml', ...(built === 'debian' ? ['docker-compose.offline.yml'] : []), join(home, 'fast-stalls.yml')];
  env = {
    ...(process.env as Record<string, string>),
    COMPOSE_FILE: files.join(':'),
    COMPOSE_PROJECT_NAME: `genesisfleet${process.pid}`,
    GENESIS_HOME: home,
    GENESIS_DASHBOARD_PORT: String(await freePort()),
  };
  await writeWorldSource(join(home, 'source'));
}, 900_000);

afterAll(async () => {
  if (compose.length && home) await run(['down', '--volumes', '--remove-orphans', '--timeout', '5'], {}, false);
  if (!home) return;
  // The containers ran as root: where this test does not, only root may remove what they wrote.
  if (process.getuid?.() !== 0)
    await execa('docker', ['run', '--rm', '--user', '0:0', '--network', 'none', '-v', `${home}:/h`, 'genesis/node:20', 'sh', '-c', 'rm -rf /h/* /h/.[!.]*'], {
      reject: false,
    });
  await rm(home, { recursive: true, force: true });
}, 120_000);

describe('docker-compose.yml', () => {
  itWith('docker')(
    'runs a world to done on three scaled workers, survives a killed worker, and the audit finds it whole',
    async () => {
      expect(['debian', 'registry']).toContain(built);
      const world = join(home, 'worlds', 'fleet.world');
      const started = Date.now();
      await run(['up', '-d', 'redis']);
      const init = await run(['run', '--rm', 'scheduler', 'init', '--world', world, '--from', join(home, 'source')], {}, false);
      expect(init.exitCode, init.all).toBe(0);
      await run(['up', '-d', 'scheduler'], { WORLD: 'fleet.world' });
      await run(['up', '-d', '--scale', 'worker=3', 'worker']);
      const scheduler = (await run(['ps', '-q', 'scheduler'])).stdout.trim();

      // Wait until every worker is alive and one runs an episode; kill that one's container.
      const status = async (): Promise<ClusterStatus> =>
        JSON.parse((await execa('docker', ['exec', scheduler, 'node', 'bin/genesis.js', 'status', '--json'])).stdout) as ClusterStatus;
      let busy: string | undefined;
      for (const until = Date.now() + 120_000; !busy && Date.now() < until; ) {
        const s = await status();
        if (s.workers.length === 3) busy = s.workers.find((w) => w.episodes.length > 0)?.host;
        if (!busy) await new Promise((r) => setTimeout(r, 500));
      }
      expect(busy, 'no worker ran an episode within 2 minutes').toBeDefined();
      const seen = await run(['run', '--rm', 'scheduler', 'status', '--json']);
      expect((JSON.parse(seen.stdout) as ClusterStatus).workers).toHaveLength(3);
      await execa('docker', ['kill', busy!]);
      log(`killed worker container ${busy} mid-episode after ${((Date.now() - started) / 1000).toFixed(1)}s`);

      // The scheduler's `run` exits when the world is done.
      const exit = await execa('docker', ['wait', scheduler], { timeout: 400_000 });
      const schedulerLog = (await execa('docker', ['logs', scheduler], { all: true, reject: false })).all ?? '';
      expect(exit.stdout.trim(), schedulerLog.slice(-3000)).toBe('0');
      log(`world done after ${((Date.now() - started) / 1000).toFixed(1)}s`);

      const audit = await run(['run', '--rm', 'scheduler', 'audit', '--world', world, '--json'], {}, false);
      const report = JSON.parse(audit.stdout) as AuditReport;
      expect(
        report.findings.filter((f) => f.severity === 'violation'),
        audit.all,
      ).toEqual([]);
      expect(audit.exitCode).toBe(0);
      expect(report).toMatchObject({
        commits: TASKS.length + 1,
        violations: 0,
        reverified: { commits: TASKS.length + 1, of: TASKS.length + 1, sandbox: 'docker' },
      });
      const log1 = await execa('git', [
        '-c',
        'safe.directory=*',
        '--git-dir',
        world,
        'log',
        '--first-parent',
        '--format=%(trailers:key=Genesis-Task,valueonly)',
        'main',
      ]);
      expect(
        log1.stdout
          .split('\n')
          .map((l) => l.trim())
          .filter(Boolean)
          .sort(),
      ).toEqual(TASKS);
      log(`audited after ${((Date.now() - started) / 1000).toFixed(1)}s`);
    },
    900_000,
  );
});
