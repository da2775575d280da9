import { execFileSync } from 'node:child_process';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect } from 'vitest';
import { runEmbedded } from '../../../src/compose/embedded-run.js';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { itWith } from '../../helpers/services.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { baseManifest, makeWorld } from '../../helpers/world-fixture.js';

const withBwrap = itWith('bwrap');
const WRITE_A = `printf "export const a = () => 'a';\\n" > src/a.js`;
const REAL_PATH = process.env.PATH;

afterEach(() => {
  process.env.PATH = REAL_PATH;
});

/**
 * A `bwrap` first on the PATH that runs the real one, except while `<dir>/fail` names a failure:
 * `race N` fails the next N starts as bubblewrap does when a mount vanishes under its bind (a
 * container Docker removes), `deny` fails every start as bubblewrap does where it may not make a
 * namespace. Each failed start appends its time (ms) to `<dir>/failed`.
 */
async function flakyBwrap(): Promise<{ dir: string; failed: () => Promise<number[]> }> {
  const dir = await tempDir('genesis-flaky-bwrap-');
  const real = execFileSync('sh', ['-c', 'command -v bwrap'], { encoding: 'utf8' }).trim();
  const script = `#!/bin/sh
mode=$(cat ${dir}/fail 2>/dev/null)
case "$mode" in
  race\\ *)
    n=\${mode#race }
    if [ "$n" -gt 1 ]; then echo "race $((n - 1))" > ${dir}/fail; else rm -f ${dir}/fail; fi
    date +%s%3N >> ${dir}/failed
    echo "bwrap: Can't bind mount /oldroot/var/lib/docker/overlay2/merged on /newroot/usr: No such file or directory" >&2
    exit 1 ;;
  deny)
    date +%s%3N >> ${dir}/failed
    echo "bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces" >&2
    exit 1 ;;
esac
exec ${real} "$@"
`;
  await writeFile(join(dir, 'bwrap'), script);
  await chmod(join(dir, 'bwrap'), 0o755);
  process.env.PATH = `${dir}:${REAL_PATH}`;
  const failed = async () => (await readFile(join(dir, 'failed'), 'utf8').catch(() => '')).split('\n').filter(Boolean).map(Number);
  return { dir, failed };
}

/** One task, a, done by a shell agent on the host that sets the bwrap failure its first episode's gate meets. */
async function oneTaskWorld(dir: string, failure: string, maxAttempts: number) {
  const count = join(dir, 'count');
  const script = `n=$(cat ${count} 2>/dev/null || echo 0); echo $((n + 1)) > ${count}; if [ "$n" = 0 ]; then echo "${failure}" > ${dir}/fail; fi; ${WRITE_A}`;
  const base = baseManifest();
  const manifest = {
    ...base,
    verify: { ...(base.verify as object), sandbox: 'bwrap' },
    agent: { kind: 'command', command: ['sh', '-c', script], sandbox: 'none', timeoutSec: 30 },
    retry: { maxAttempts },
    parallelism: 1,
    tasks: [{ id: 'a', title: 'module a', paths: ['src/a.js'], check: 'node --test test/a.test.js' }],
  };
  return makeWorld({ sandbox: 'bwrap', manifest, recording: {} });
}

describe('a run whose gate meets a bubblewrap failure', () => {
  withBwrap('starts bwrap again after a wait when a mount raced it, within the same gate, and the episode lands', async () => {
    const bwrap = await flakyBwrap();
    const f = await oneTaskWorld(bwrap.dir, 'race 2', 1);
    const summary = await runEmbedded({ world: f.world, sandbox: f.sandbox });
    expect(summary.stop).toMatchObject({ kind: 'done' });
    const failed = await bwrap.failed();
    expect(failed).toHaveLength(2);
    // Retried inside the gate's step after a wait (at least half of 50 ms, jitter 0.5), not by a new episode.
    expect(failed[1]! - failed[0]!).toBeGreaterThanOrEqual(25);
    expect(await new GitLedger(f.world.path).readAll()).toMatchObject([{ outcome: 'accepted' }]);
  });

  withBwrap('gives a race that outlasts the retries back as abandoned, uncharged, and lands the task with the next episode after a cooldown', async () => {
    const bwrap = await flakyBwrap();
    // One attempt only: were the failure charged to the episode, the task would be blocked.
    const f = await oneTaskWorld(bwrap.dir, 'race 5', 1);
    const summary = await runEmbedded({ world: f.world, sandbox: f.sandbox });
    const failed = await bwrap.failed();
    // The first start and four retries (MOUNT_RACE_BACKOFF), each wait at least half of 50, 100, 200, 400 ms (jitter 0.5).
    expect(failed).toHaveLength(5);
    const waits = failed.slice(1).map((t, i) => t - failed[i]!);
    for (const [i, wait] of waits.entries()) expect(wait).toBeGreaterThanOrEqual(25 * 2 ** i);
    expect(summary.stop).toMatchObject({ kind: 'done' });
    const episodes = await new GitLedger(f.world.path).readAll();
    expect(episodes.map((e) => [e.outcome, e.reason])).toEqual([
      ['abandoned', 'bwrap-failed'],
      ['accepted', null],
    ]);
    expect(episodes[0]!.message).toContain("Can't bind mount /oldroot");
    // Retried after the outage cooldown, not at once.
    expect(Date.parse(episodes[1]!.startedAt) - Date.parse(episodes[0]!.endedAt!)).toBeGreaterThanOrEqual(1_900);
  });

  withBwrap('stops at once, with what blocks bubblewrap and how to fix it, when bwrap cannot work here', async () => {
    const bwrap = await flakyBwrap();
    const f = await oneTaskWorld(bwrap.dir, 'deny', 3);
    const started = Date.now();
    const summary = await runEmbedded({ world: f.world, sandbox: f.sandbox });
    expect(Date.now() - started).toBeLessThan(20_000);
    // Not retried: one start of bwrap met it, and the run stopped.
    expect(await bwrap.failed()).toHaveLength(1);
    expect(summary.stop).toMatchObject({ kind: 'circuit-open', reason: 'bwrap-unavailable' });
    const message = summary.stop.kind === 'circuit-open' ? summary.stop.message : '';
    expect(message).toContain('bubblewrap cannot run a sandbox here: bwrap: No permissions to creating new namespace');
    expect(message).toContain('scripts/setup-services.sh');
    expect(summary.episodes).toBe(1);
    const [episode] = await new GitLedger(f.world.path).readAll();
    expect(episode).toMatchObject({ outcome: 'abandoned', reason: 'bwrap-unavailable' });
  });
});
