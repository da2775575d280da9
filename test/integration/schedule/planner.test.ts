import { describe, expect } from 'vitest';
import { stringify } from 'yaml';
import { runEmbedded } from '../../../src/compose/embedded-run.js';
import { readAcceptedHistory } from '../../../src/world/history/accepted-history.js';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { itWith } from '../../helpers/services.js';
import { baseManifest, GOOD_A, GOOD_B, makeWorld } from '../../helpers/world-fixture.js';

const plan = (tasks: unknown[]) => stringify({ tasks });
const A = { id: 'a', title: 'module a', paths: ['src/a.js'], check: 'node --test test/a.test.js' };
const B = { id: 'b', title: 'module b', paths: ['src/b.js'], check: 'node --test test/b.test.js', dependsOn: ['a'] };

describe('a planner episode', () => {
  itWith('bwrap')('grows the task list through the gate, and the new tasks are then done', async () => {
    const manifest = baseManifest({ tasksDir: 'tasks', tasks: [{ id: 'plan', title: 'plan the modules', kind: 'planner', paths: ['tasks/**'] }] });
    const cyclic = plan([{ ...A, dependsOn: ['b'] }, B]);
    const f = await makeWorld({
      sandbox: 'bwrap',
      manifest,
      recording: {
        plan: [{ write: { 'tasks/plan.yaml': cyclic } }, { write: { 'tasks/plan.yaml': plan([A, B]) } }],
        a: [{ write: { 'src/a.js': GOOD_A } }],
        b: [{ write: { 'src/b.js': GOOD_B } }],
      },
    });
    const summary = await runEmbedded({ world: f.world, sandbox: f.sandbox });
    expect(summary.stop.kind).toBe('done');
    const episodes = await new GitLedger(f.world.path).readAll();
    expect(episodes.map((e) => [e.task, e.outcome, e.reason])).toEqual([
      ['plan', 'rejected', 'invalid-plan'],
      ['plan', 'accepted', null],
      ['a', 'accepted', null],
      ['b', 'accepted', null],
    ]);
    expect(episodes[0]!.message).toContain('dependency cycle');
    expect((await readAcceptedHistory(f.world.path, 'main')).map((c) => c.task)).toEqual(['b', 'a', 'plan', null]);
  });
});
