import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { unlinkSync } from 'node:fs';
import { createConnection, createServer, type Server } from 'node:net';
import { join } from 'node:path';
import Docker from 'dockerode';
import { describe, expect } from 'vitest';
import { DockerSandbox } from '../../../src/sandbox/index.js';
import { runEmbedded } from '../../../src/compose/embedded-run.js';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { itWith } from '../../helpers/services.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { baseManifest, makeWorld } from '../../helpers/world-fixture.js';

const withDocker = itWith('docker');
const IMAGE = 'genesis/node:20';
const WRITE_A = `printf "export const a = () => 'a';\\n" > src/a.js`;

/** One task, a, done by a shell agent on the host (it must reach Docker to play the outage). */
function oneTaskWorld(script: string, verify: Record<string, unknown> = {}): Record<string, unknown> {
  const base = baseManifest();
  return {
    ...base,
    verify: { ...(base.verify as object), sandbox: 'docker', ...verify },
    agent: { kind: 'command', command: ['sh', '-c', script], sandbox: 'none', timeoutSec: 30 },
    retry: { maxAttempts: 3 },
    parallelism: 1,
    tasks: [{ id: 'a', title: 'module a', paths: ['src/a.js'], check: 'node --test test/a.test.js' }],
  };
}

/** Removes the flag file if it exists, in one step: two connections at once cannot both take it. */
function takeFlag(flag: string): boolean {
  try {
    unlinkSync(flag);
    return true;
  } catch {
    return false;
  }
}

/** A Unix socket in front of the real Docker daemon that drops one connection whenever `flag` exists (and removes it). */
async function flakyDockerSocket(dir: string, flag: string): Promise<{ path: string; dropped: () => number; server: Server }> {
  const path = join(dir, 'docker.sock');
  let dropped = 0;
  const server = createServer((client) => {
    if (takeFlag(flag)) {
      dropped++;
      client.destroy();
      return;
    }
    const daemon = createConnection('/var/run/docker.sock');
    client.pipe(daemon).pipe(client);
    const close = () => {
      client.destroy();
      daemon.destroy();
    };
    client.on('error', close);
    daemon.on('error', close);
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  return { path, dropped: () => dropped, server };
}

describe('a run whose gate meets a Docker failure', () => {
  withDocker('stops at once, naming the missing image and how to build it, when the image vanished during the run', async () => {
    // Someone removes the gate's image while the run goes on (a docker image prune, another host's setup).
    const tag = `genesis/vocab-vanishing:${randomUUID().slice(0, 8)}`;
    execFileSync('docker', ['tag', IMAGE, tag]);
    try {
      const f = await makeWorld({
        sandbox: 'docker',
        manifest: oneTaskWorld(`docker rmi -f ${tag} >/dev/null 2>&1; ${WRITE_A}`, { image: tag }),
        recording: {},
      });
      const started = Date.now();
      const summary = await runEmbedded({ world: f.world, sandbox: new DockerSandbox({ image: tag }) });
      expect(Date.now() - started).toBeLessThan(20_000);
      expect(summary.stop).toMatchObject({ kind: 'circuit-open', reason: 'sandbox-image-missing' });
      expect(summary.stop.kind === 'circuit-open' && summary.stop.message).toContain(`The sandbox image ${tag} does not exist.`);
      expect(summary.stop.kind === 'circuit-open' && summary.stop.message).toContain(`docker build -t ${tag}`);
      expect(summary.episodes).toBe(1);
      // A configuration mistake is not the task's failure: once the image is back the task has all its attempts.
      const [episode] = await new GitLedger(f.world.path).readAll();
      expect(episode).toMatchObject({ outcome: 'abandoned', reason: 'sandbox-image-missing' });
    } finally {
      execFileSync('docker', ['rmi', '-f', tag], { stdio: 'ignore' });
    }
  });

  withDocker('gives a transient outage back as abandoned and lands the task with the next episode', async () => {
    const dir = await tempDir('genesis-flaky-docker-');
    const flag = join(dir, 'outage');
    const count = join(dir, 'count');
    const socket = await flakyDockerSocket(dir, flag);
    try {
      // The first episode starts an outage of one connection: the gate's first call to the daemon fails.
      const script = `n=$(cat ${count} 2>/dev/null || echo 0); echo $((n + 1)) > ${count}; if [ "$n" = 0 ]; then touch ${flag}; fi; ${WRITE_A}`;
      const f = await makeWorld({ sandbox: 'docker', manifest: oneTaskWorld(script), recording: {} });
      const summary = await runEmbedded({ world: f.world, sandbox: new DockerSandbox({ image: IMAGE, docker: new Docker({ socketPath: socket.path }) }) });
      expect(socket.dropped()).toBe(1);
      expect(summary.stop).toMatchObject({ kind: 'done' });
      const episodes = await new GitLedger(f.world.path).readAll();
      expect(episodes.map((e) => [e.outcome, e.reason])).toEqual([
        ['abandoned', 'docker-unavailable'],
        ['accepted', null],
      ]);
      // Retried after the outage cooldown, not at once.
      expect(Date.parse(episodes[1]!.startedAt) - Date.parse(episodes[0]!.endedAt!)).toBeGreaterThanOrEqual(1_900);
    } finally {
      await new Promise((resolve) => socket.server.close(resolve));
    }
  });
});
