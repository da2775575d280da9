import { describe, expect } from 'vitest';
import { runEmbedded } from '../../../src/compose/embedded-run.js';
import { genesis } from '../../helpers/genesis-cli.js';
import { itWith } from '../../helpers/services.js';
import { BAD_A, baseManifest, GOOD_B, makeWorld } from '../../helpers/world-fixture.js';

describe('genesis status --world', () => {
  itWith('bwrap')("lists each task's state, attempts and why it is blocked or waits, and the same as JSON", async () => {
    const manifest = baseManifest({
      tasks: [
        { id: 'a', title: 'module a', paths: ['src/a.js'], check: 'node --test test/a.test.js' },
        { id: 'b', title: 'module b', paths: ['src/b.js'], check: 'node --test test/b.test.js' },
        { id: 'c', title: 'after a', paths: ['src/c.js'], dependsOn: ['a'] },
      ],
    });
    const { world, sandbox } = await makeWorld({
      sandbox: 'bwrap',
      manifest,
      recording: { a: [{ write: { 'src/a.js': BAD_A } }, { write: { 'src/a.js': BAD_A } }], b: [{ write: { 'src/b.js': GOOD_B } }] },
    });
    await runEmbedded({ world, sandbox });

    const text = await genesis(['status', '--world', world.path], { env: { COLUMNS: '100' } });
    expect(text.status, text.stderr).toBe(0);
    const lines = text.stdout.split('\n');
    expect(lines).toContain('tasks: 1 of 3 done · 0 running · 1 pending · 1 blocked');
    const row = (id: string) => lines.find((l) => l.startsWith(`${id} `))!;
    expect(row('a')).toMatch(/^a +blocked +2 +- +(used its 2 attempts|failed the same way twice in a row); last rejected: check-failed: /);
    expect(row('b')).toMatch(/^b +done +1 +- +landed in [0-9a-f]{12} \(attempt 1\)$/);
    expect(row('c')).toMatch(/^c +pending +0 +2 +waits for a, which is blocked$/);
    // The table fits the terminal (the hint below it names the CLI as it was invoked, a path here).
    for (const line of lines.slice(lines.indexOf(row('a')) - 1, lines.indexOf(row('c')) + 1)) expect(line.length).toBeLessThanOrEqual(100);
    expect(text.stdout).toMatch(/blocked: read the attempts \(.*episodes --task a\)[^\n]*\n {2}then give the task new attempts: .*task retry a\n/);
    expect(text.stdout).toContain('integration queue: empty');

    const json = await genesis(['status', '--world', world.path, '--json']);
    const out = JSON.parse(json.stdout) as {
      counts: Record<string, number>;
      tasks: Array<{ id: string; state: string; attempts: number; blockedBy: string | null; waitingOn: string | null }>;
    };
    expect(out.counts).toMatchObject({ done: 1, pending: 1, blocked: 1, total: 3 });
    expect(out.tasks.map((t) => [t.id, t.state, t.attempts, t.waitingOn])).toEqual([
      ['a', 'blocked', 2, null],
      ['b', 'done', 1, null],
      ['c', 'pending', 0, 'a'],
    ]);
    expect(out.tasks[0]!.blockedBy).toMatch(/^(attempts|repeat)$/);
  });
});
