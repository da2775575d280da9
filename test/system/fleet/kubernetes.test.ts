import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chown, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { execa } from 'execa';
import { parseAllDocuments, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import type { AuditReport } from '../../../src/audit/index.js';
import { itWith } from '../../helpers/services.js';
import { forPodman, type KubeObject } from './podman-play.js';

/**
 * deploy/kubernetes for real, as far as a machine with no cluster goes: the overlay `podman`
 * rendered by kustomize and played by Debian's podman (`podman kube play`): Redis with a password
 * from a Secret, the scheduler Job's pod (its init container makes the world on the worlds volume),
 * two worker pods confining gates and agents with bubblewrap and the capabilities worker.yaml
 * names (no Docker socket), and genesis serve. One worker pod is killed in the middle of an
 * episode; the world still lands every task once, and `genesis audit` in the other pod finds it whole.
 * What podman does not do (Services, a Job's retries, probes: it runs them through systemd,
 * absent here) is done by hand or said in docs/guides/kubernetes.md.
 */
const ROOT = resolve(import.meta.dirname, '../../..');
const TASKS = ['t1', 't2', 't3', 't4', 't5', 't6'];
const log = (line: string) => process.stderr.write(`[kubernetes] ${line}\n`);

let env: Record<string, string> = {};
let home = '';
let playFile = '';
let played: KubeObject[] = [];
let redisPort = 0;
let servePort = 0;
const password = randomBytes(12).toString('hex');

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const port = (server.address() as { port: number }).port;
  await new Promise((done) => server.close(done));
  return port;
}

const podman = (args: string[], options: { timeout?: number; reject?: boolean } = {}) =>
  execa('podman', args, { env, reject: options.reject ?? true, timeout: options.timeout ?? 120_000, all: true, stdin: 'ignore' });
/** podman names a Deployment's container `<deployment>-pod-0-<container>`, a Pod's `<pod>-<container>`. */
const workerContainer = (i: number) => `genesis-worker-${i}-pod-0-worker`;
const exec = (container: string, args: string[], reject = true) => podman(['exec', container, ...args], { reject });
/** The last lines of every container of the fleet, for a failed expectation to show. */
async function tails(): Promise<string> {
  const names = (await podman(['ps', '-a', '--format', '{{.Names}}'], { reject: false })).stdout.split('\n').filter((n) => n.startsWith('genesis-'));
  const logs = await Promise.all(names.map(async (n) => `--- ${n}\n${((await podman(['logs', '--tail', '15', n], { reject: false })).all ?? '').trim()}`));
  return logs.join('\n');
}

/** Tasks t1..t6, each writing one module after a few seconds, so a worker pod can be killed mid-episode. */
async function writeWorldSource(dir: string): Promise<void> {
  const files: Record<string, string> = {
    'package.json': '{ "type": "module" }\n',
    // The agent writes its module only when confined: an unprivileged uid called agent, under the
    // hostname bubblewrap gives it, without the orchestrator's files (/opt/genesis), the world's
    // repository on the worlds volume, or the worker's Redis password.
    '.genesis/agent.sh':
      '#!/bin/bash\nset -e\n' +
      'if [ "$(id -u)" = 0 ] || [ "$(id -un)" != agent ] || [ "$(cat /proc/sys/kernel/hostname)" != agent ] || [ -e /opt/genesis ] || [ -e /var/lib/genesis/worlds/world/HEAD ] || [ -n "$GENESIS_REDIS_PASSWORD" ]; then echo "not confined" >&2; exit 3; fi\n' +
      'sleep 8\nmkdir -p src\necho "export const v = \'$GENESIS_TASK_ID\';" > "src/$GENESIS_TASK_ID.js"\n',
    'world.yaml': stringify({
      name: 'kube',
      goal: { outcome: 'modules t1..t6 exist' },
      // A gate in bubblewrap sees no network: the pod's Redis, on the host's network here, is out of reach.
      verify: { sandbox: 'bwrap', test: 'node --test test/base.test.js', timeoutSec: 120, limits: { cpus: 1, memoryMb: 256, pids: 64 } },
      protected: ['test/**', 'world.yaml', '.genesis/**'],
      agent: { kind: 'command', command: ['bash', '.genesis/agent.sh'], timeoutSec: 60 },
      retry: { maxAttempts: 3 },
      parallelism: 4,
      tasks: TASKS.map((t) => ({ id: t, title: `module ${t}`, paths: [`src/${t}.js`], check: `node --test test/${t}.test.js` })),
    }),
    'test/base.test.js':
      "import test from 'node:test';\nimport assert from 'node:assert';\ntest('the gate has no network', async () => { await assert.rejects(fetch('http://127.0.0.1:" +
      '__REDIS_PORT__' +
      "/')); });\n",
  };
  for (const t of TASKS)
    files[`test/${t}.test.js`] =
      `import test from 'node:test';\nimport assert from 'node:assert';\nimport { v } from '../src/${t}.js';\ntest('${t}', () => assert.equal(v, '${t}'));\n`;
  for (const [path, content] of Object.entries(files)) {
    await mkdir(join(dir, path, '..'), { recursive: true });
    await writeFile(join(dir, path), content.replace('__REDIS_PORT__', String(redisPort)), { mode: path.endsWith('.sh') ? 0o755 : 0o644 });
  }
}

beforeAll(async () => {
  const build = await execa('bash', [join(ROOT, 'sandboxes/build-images.sh'), '--compose'], { all: true, timeout: 900_000 });
  log(build.all ?? '');
  const setup = await execa('bash', [join(ROOT, 'scripts/setup-kubernetes.sh')], { all: true, reject: false, timeout: 600_000 });
  log(setup.all ?? '');
  expect(setup.exitCode, setup.all).toBe(0);
  const conf = /^CONTAINERS_CONF=(.+)$/m.exec(setup.stdout)?.[1];
  env = { ...(process.env as Record<string, string>), CONTAINERS_CONF: conf! };
  home = await mkdtemp('/var/tmp/genesis-kube-');
  [redisPort, servePort] = [await freePort(), await freePort()];
  const rendered = parseAllDocuments(execFileSync('kubectl', ['kustomize', join(ROOT, 'deploy/kubernetes/overlays/podman')], { encoding: 'utf8' })).map(
    (d) => d.toJSON() as KubeObject,
  );
  played = await forPodman(rendered, {
    home,
    redisPort,
    servePort,
    workers: 2,
    // Workers notice a killed worker's episode within seconds, not BullMQ's default minute.
    config: { GENESIS_WORLD_SOURCE: '/var/lib/genesis/source', GENESIS_LOCK_MS: '3000', GENESIS_STALLED_MS: '2000' },
  });
  await writeWorldSource(join(home, 'volumes/genesis-worlds/source'));
  // A cluster's volume gives the pod's fsGroup the volume; a host directory is chowned by hand.
  const redisSecurity = rendered.find((o) => o.kind === 'Deployment' && o.metadata.name === 'genesis-redis')!.spec.template.spec.securityContext;
  await chown(join(home, 'volumes/genesis-redis-data'), redisSecurity.runAsUser, redisSecurity.fsGroup);
  playFile = join(home, 'play.yaml');
  await writeFile(playFile, played.map((o) => stringify(o)).join('---\n'));
  // podman reads a Secret for secretKeyRef from its own store, as a JSON map of base64 values.
  await podman(['kube', 'play', '--down', playFile], { reject: false });
  await podman(['secret', 'rm', 'genesis-secrets'], { reject: false });
  const secretFile = join(home, 'secret.json');
  const secret = { 'redis-password': password, 'serve-token': randomBytes(12).toString('hex') };
  await writeFile(secretFile, JSON.stringify(Object.fromEntries(Object.entries(secret).map(([k, v]) => [k, Buffer.from(v).toString('base64')]))), {
    mode: 0o600,
  });
  await podman(['secret', 'create', 'genesis-secrets', secretFile]);
  await rm(secretFile);
}, 1_200_000);

afterAll(async () => {
  if (playFile) await podman(['kube', 'play', '--down', playFile], { reject: false, timeout: 120_000 });
  await podman(['secret', 'rm', 'genesis-secrets'], { reject: false });
  if (home) await rm(home, { recursive: true, force: true });
}, 180_000);

describe('deploy/kubernetes played by podman', () => {
  itWith('bwrap')(
    'runs a world to done on two worker pods with bubblewrap and no Docker socket, survives a killed worker pod, and the audit finds it whole',
    async () => {
      const started = Date.now();
      const seconds = () => ((Date.now() - started) / 1000).toFixed(1);
      const play = await podman(['kube', 'play', playFile], { reject: false, timeout: 300_000 });
      log(`podman kube play → exit ${play.exitCode} after ${seconds()}s`);
      expect(play.exitCode, `${play.all}\n${await tails()}`).toBe(0);

      // The world runs from the moment the scheduler's pod starts: find a worker pod in the middle
      // of an episode from its log (started, not ended) and kill it. Logs, not `genesis status`:
      // a Node process per look is seconds on a loaded machine, and episodes are seconds long.
      const logOf = async (i: number) => (await podman(['logs', workerContainer(i)], { reject: false })).stdout;
      const midEpisode = (text: string) => [...text.matchAll(/▶ (\S+)/g)].some((m) => !text.includes(`✓ ${m[1]}:`) && !text.includes(`✗ ${m[1]}:`));
      // What KEDA's redis trigger reads (overlays/cluster): BullMQ's list of running episodes, its length.
      // Redis is on the host's network here; it answers only with the Secret's password.
      expect((await execa('redis-cli', ['-p', String(redisPort), 'ping'])).stdout).toMatch(/NOAUTH/);
      const redis = (...args: string[]) => execa('redis-cli', ['-p', String(redisPort), ...args], { env: { REDISCLI_AUTH: password } });
      let running = { type: 'none', length: 0 };
      let pod: number | undefined;
      let logs: string[] = [];
      for (const until = Date.now() + 180_000; pod === undefined && Date.now() < until; ) {
        logs = [await logOf(1), await logOf(2)];
        if (logs.every((l) => / ready: 2 at a time /.test(l))) pod = [1, 2].find((i) => midEpisode(logs[i - 1]!));
        // Read after the logs: an episode a log shows started is in BullMQ's active list by then.
        const length = Number((await redis('llen', 'genesis:episodes:active')).stdout);
        if (length > running.length) running = { type: (await redis('type', 'genesis:episodes:active')).stdout.trim(), length };
        if (pod === undefined) await new Promise((r) => setTimeout(r, 300));
      }
      expect(pod, `no worker pod ran an episode within 3 minutes\n${await tails()}`).toBeDefined();
      await podman(['pod', 'kill', `genesis-worker-${pod}-pod-0`]);
      log(`killed worker pod ${pod} mid-episode after ${seconds()}s`);
      expect(running.type).toBe('list');
      expect(running.length).toBeGreaterThan(0);

      // The scheduler's `genesis run` ends when the world is done: the Job's pod exits 0.
      const scheduler = 'genesis-scheduler-scheduler';
      const exit = await podman(['wait', scheduler], { timeout: 400_000 });
      const schedulerLog = (await podman(['logs', scheduler], { reject: false })).all ?? '';
      expect(exit.stdout.trim(), `${schedulerLog.slice(-3000)}\n${await tails()}`).toBe('0');
      log(`world done after ${seconds()}s`);

      const survivor = workerContainer(pod === 1 ? 2 : 1);
      // The survivor says what confines what, and its readiness probe (run by hand: podman runs
      // probes through systemd, which these machines lack) passes.
      const probe = played.find((o) => o.metadata.name === 'genesis-worker-1')!.spec.template.spec.containers[0].readinessProbe.exec.command;
      expect((await exec(survivor, probe, false)).exitCode).toBe(0);
      const doctor = JSON.parse((await exec(survivor, ['node', 'bin/genesis.js', 'doctor', '--json'], false)).stdout) as Array<{
        name: string;
        status: string;
        detail: string;
      }>;
      expect(doctor.find((c) => c.name === 'docker')).toMatchObject({ status: 'warn' });
      expect(doctor.find((c) => c.name === 'confines')).toMatchObject({
        status: 'ok',
        detail:
          'gates: bubblewrap, no network, as a leased unprivileged uid\nagents: bubblewrap with a network namespace of their own, as a leased unprivileged uid',
      });
      const audit = await exec(survivor, ['node', 'bin/genesis.js', 'audit', '--world', '/var/lib/genesis/worlds/world', '--json'], false);
      const report = JSON.parse(audit.stdout) as AuditReport;
      expect(
        report.findings.filter((f) => f.severity === 'violation'),
        audit.all,
      ).toEqual([]);
      expect(report).toMatchObject({ commits: TASKS.length + 1, violations: 0, reverified: { commits: TASKS.length + 1, sandbox: 'bwrap' } });
      const landed = await execa('git', [
        '-c',
        'safe.directory=*',
        '--git-dir',
        join(home, 'volumes/genesis-worlds/worlds/world'),
        'log',
        '--first-parent',
        '--format=%(trailers:key=Genesis-Task,valueonly)',
        'main',
      ]);
      expect(
        landed.stdout
          .split('\n')
          .map((l) => l.trim())
          .filter(Boolean)
          .sort(),
      ).toEqual(TASKS);

      // genesis serve, behind its Service on a cluster, answers for the world.
      let health: { ok?: boolean; name?: string } = {};
      for (const until = Date.now() + 60_000; !health.ok && Date.now() < until; ) {
        health = await fetch(`http://127.0.0.1:${servePort}/api/health`)
          .then((r) => r.json() as Promise<typeof health>)
          .catch(() => ({}));
        if (!health.ok) await new Promise((r) => setTimeout(r, 1000));
      }
      expect(health).toMatchObject({ ok: true, name: 'kube' });
      log(`audited and served after ${seconds()}s`);
    },
    900_000,
  );
});
