import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect } from 'vitest';
import { runEmbedded } from '../../../src/compose/embedded-run.js';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { outcomeResult } from '../../../src/operations/carry-out-steering.js';
import { steerWorld } from '../../../src/operations/steer-world.js';
import type { RunEvent } from '../../../src/schedule/run/ports/events.js';
import { readAcceptedHistory } from '../../../src/world/history/accepted-history.js';
import { acquireRunLock } from '../../../src/world/run-lock.js';
import { listSteeringRequests } from '../../../src/world/steering-requests.js';
import { startCli } from '../../helpers/cli-process.js';
import { genesis } from '../../helpers/genesis-cli.js';
import { itWith } from '../../helpers/services.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { baseManifest, GOOD_A, makeWorld } from '../../helpers/world-fixture.js';

const GOOD_C = "export const c = () => 'c';\n";

async function cloneOf(world: string): Promise<string> {
  const clone = join(await tempDir('genesis-steer-'), 'clone');
  execFileSync('git', ['clone', '-q', world, clone]);
  return clone;
}

describe('steering a running world', () => {
  itWith('bwrap')(
    'a running genesis run takes task add and a stale amendment between landings, keeps the task the amendment did not know of, and goes on with the new plan',
    async () => {
      const f = await makeWorld({
        sandbox: 'bwrap',
        manifest: baseManifest({ tasks: [{ id: 'a', title: 'module a', paths: ['src/a.js'], check: 'node --test test/a.test.js' }] }),
        // Slow agents, so the run is still going when each request comes.
        recording: { a: [{ sleepMs: 6000, write: { 'src/a.js': GOOD_A } }], c: [{ sleepMs: 8000, write: { 'src/c.js': GOOD_C } }] },
      });
      const stale = await cloneOf(f.world.path); // made before the task is added: two commits behind by the time it amends
      const run = startCli(['run', '--world', f.world.path, '--sandbox', 'bwrap']);
      await run.waitFor(/▶ a attempt 1/);

      const add = await genesis(['task', 'add', 'c', '--world', f.world.path, '--title', 'module c', '--paths', 'src/c.js']);
      expect(add.status, add.stderr).toBe(0);
      expect(add.stderr).toMatch(/waiting for the running scheduler to take task c \(pid \d+\), 0 s/);
      await run.waitFor(/▶ c attempt 1/);

      await writeFile(join(stale, 'NOTES.md'), 'a note from a person\n');
      const amend = await genesis(['amend', '--world', f.world.path, '--from', stale, '--message', 'add notes', '--sandbox', 'bwrap']);
      expect(amend.status, amend.stderr).toBe(0);
      expect(amend.stderr).toMatch(/waiting for the running scheduler to take the amendment \(pid \d+\)/);
      expect(amend.stderr).toMatch(/warning: .* accepted commit\(s\) behind the head [0-9a-f]{12}: merged three-way onto the head, keeping what landed since/);
      const [amended] = await readAcceptedHistory(f.world.path, 'main');
      expect(amended!.subject).toBe('add notes');
      // The task added a minute before is still there: the stale clone's world.yaml did not undo it.
      expect(parse((await f.world.readFile(amended!.commit, 'world.yaml'))!).tasks.map((t: { id: string }) => t.id)).toEqual(['a', 'c']);
      expect(await f.world.readFile(amended!.commit, 'NOTES.md')).toBe('a note from a person\n');

      expect(await run.exited).toBe(0);
      expect(run.lines.join('\n')).toMatch(/took a new task from cli .*\n(.*\n)*.*✓ a new task landed as [0-9a-f]{12}/);
      expect(run.lines.join('\n')).toMatch(/✓ an amendment landed as [0-9a-f]{12}.*the run goes on with the new plan/);
      const episodes = await new GitLedger(f.world.path).readAll();
      expect(episodes.map((e) => [e.task, e.outcome]).sort()).toEqual([
        ['a', 'accepted'],
        ['c', 'accepted'],
      ]);
      const history = await readAcceptedHistory(f.world.path, 'main');
      // One writer, one line: every change landed on the one before it, nothing was put back as foreign.
      expect(run.lines.join('\n')).not.toMatch(/moved outside Genesis/);
      expect(history.map((c) => c.task ?? c.subject)).toEqual(expect.arrayContaining(['world: add task c', 'add notes', 'a', 'c']));
      const audit = await genesis(['audit', '--world', f.world.path, '--sample', '0']);
      expect(audit.status, audit.stdout + audit.stderr).toBe(0);
    },
    120_000,
  );

  itWith('bwrap')(
    'an embedded run takes a task added from the same process and runs it without a restart; a reopened task is done again',
    async () => {
      const f = await makeWorld({
        sandbox: 'bwrap',
        manifest: baseManifest({ parallelism: 1, tasks: [{ id: 'a', title: 'module a', paths: ['src/a.js'], check: 'node --test test/a.test.js' }] }),
        recording: { a: [{ sleepMs: 3000, write: { 'src/a.js': GOOD_A } }], c: [{ write: { 'src/c.js': GOOD_C } }] },
      });
      // As genesis run does: the run holds the world's lock, so steerWorld leaves its request for the run.
      const lock = await acquireRunLock(f.world.scratchDir);
      const events: RunEvent[] = [];
      let started!: () => void;
      const firstEpisode = new Promise<void>((resolve) => (started = resolve));
      const running = runEmbedded({
        world: f.world,
        sandbox: f.sandbox,
        onEvent: (e) => {
          events.push(e);
          if (e.type === 'episode-start') started();
        },
      }).finally(() => lock.release());
      await firstEpisode;
      const lines: string[] = [];
      const steer = { what: 'task c', sandboxFor: async () => f.sandbox, onWait: (line: string) => lines.push(line) };
      const added = outcomeResult(
        await steerWorld(f.world, { kind: 'add-task', by: 'test', task: { id: 'c', title: 'module c', paths: ['src/c.js'] } }, steer),
        'add-task',
      );
      expect(lines[0]).toMatch(/^waiting for the running scheduler to take task c \(pid \d+\), 0 s$/);
      const summary = await running;
      expect(summary.stop).toEqual({ kind: 'done' });
      expect(events.filter((e) => e.type === 'episode-end').map((e) => e.type === 'episode-end' && [e.task, e.outcome])).toEqual([
        ['a', 'accepted'],
        ['c', 'accepted'],
      ]);
      expect(events.some((e) => e.type === 'steering' && e.state === 'done' && e.commit === added.commit)).toBe(true);
      expect(await listSteeringRequests(f.world.path)).toEqual([]);

      // Between runs: a person changes a's module by hand, then reopens a (the reason recorded): a done task is pending
      // again, and the next run does it again (its agent writes GOOD_A once more, a real change now).
      const clone = await cloneOf(f.world.path);
      await writeFile(join(clone, 'src/a.js'), `${GOOD_A}// by hand\n`);
      const byHand = await genesis(['amend', '--world', f.world.path, '--from', clone, '--message', 'a by hand', '--sandbox', 'bwrap']);
      expect(byHand.status, byHand.stderr).toBe(0);
      const reopen = await genesis(['task', 'reopen', 'a', '--world', f.world.path, '--reason', 'its acceptance test got stricter']);
      expect(reopen.status, reopen.stderr).toBe(0);
      expect(reopen.stdout).toMatch(/task a is pending again \(reopened as [0-9a-f]{12}\)/);
      const [reopened] = await readAcceptedHistory(f.world.path, 'main');
      expect(reopened).toMatchObject({ subject: 'world: reopen task a', reopen: 'a', amend: expect.stringMatching(/reopen task a$/) });
      expect(await f.world.doneTasks('main')).toEqual(new Set(['c']));
      const shown = await genesis(['show', 'HEAD', '--world', f.world.path]);
      expect(shown.stdout).toMatch(/a reopening of task a \(genesis task reopen\) by cli .*: its acceptance test got stricter/);
      const again = await genesis(['task', 'reopen', 'a', '--world', f.world.path, '--reason', 'twice']);
      expect(again.status).toBe(1);
      expect(again.stderr).toContain('[task-not-done]');
      const rerun = await genesis(['run', '--world', f.world.path, '--sandbox', 'bwrap']);
      expect(rerun.status, rerun.stdout + rerun.stderr).toBe(0);
      expect(await f.world.doneTasks('main')).toEqual(new Set(['a', 'c']));
      const last = (await new GitLedger(f.world.path).readAll()).filter((e) => e.task === 'a').at(-1)!;
      const prompt = (await new GitLedger(f.world.path).readArtifacts(last.id)).prompt ?? '';
      expect(prompt).toContain('reopened: its acceptance test got stricter');
      expect(prompt).toMatch(/attempt 1 of 2/);
      // The reopening is a person's commit the audit accepts, and a's check judges again only once a is done again.
      const audit = await genesis(['audit', '--world', f.world.path, '--sample', '0']);
      expect(audit.status, audit.stdout + audit.stderr).toBe(0);
    },
    120_000,
  );

  itWith('bwrap')('gives up with a clear error when no running scheduler takes the request in time, and withdraws it', async () => {
    const f = await makeWorld({ sandbox: 'bwrap', recording: {} });
    // A run lock held by a live process that runs no scheduler: this test's own.
    const lock = await acquireRunLock(f.world.scratchDir);
    try {
      const lines: string[] = [];
      const error = await steerWorld(
        f.world,
        { kind: 'reopen', by: 'test', task: 'a', reason: 'x' },
        { what: 'the reopening', sandboxFor: async () => f.sandbox, timeoutMs: 1500, pollMs: 100, onWait: (l) => lines.push(l) },
      ).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'steering-timeout', message: expect.stringMatching(/did not take the reopening within 2 s/) });
      expect(lines[0]).toMatch(/waiting for the running scheduler to take the reopening \(pid \d+\), 0 s/);
      expect(await listSteeringRequests(f.world.path)).toEqual([]);
    } finally {
      await lock.release();
    }
  });
});
