import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { parse } from 'yaml';
import { readAcceptedHistory } from '../../../src/world/history/accepted-history.js';
import { itWith } from '../../helpers/services.js';
import { expectOneClearError, genesis, refsOf, writeSource } from './bad-input-cli.js';

let root: string;
let world: string;

const WORLD_YAML = `name: stale
goal: { outcome: "notes exist" }
verify: { sandbox: bwrap, test: "test -f world.yaml" }
agent: { kind: script, script: recording.yaml }
tasks:
  - { id: a, title: "module a", paths: [src/a.js] }
`;

const tasksAt = async (commit: string) =>
  (parse(execFileSync('git', ['--git-dir', world, 'show', `${commit}:world.yaml`], { encoding: 'utf8' })) as { tasks: Array<{ id: string }> }).tasks.map(
    (t) => t.id,
  );

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'genesis-stale-amend-'));
  const source = await writeSource(join(root, 'source'), WORLD_YAML, { 'recording.yaml': 'tasks: {}\n' });
  world = join(root, 'w.world');
  const made = await genesis(['init', '--world', world, '--from', source]);
  if (made.code !== 0) throw new Error(made.stderr);
}, 60_000);
afterAll(() => rm(root, { recursive: true, force: true }));

describe('a stale amendment never silently undoes accepted work', () => {
  itWith('bwrap')(
    'a clone made before a task was added, amending world.yaml, is refused with what to do; --force undoes the task only on purpose',
    async () => {
      const clone = join(root, 'clone');
      execFileSync('git', ['clone', '-q', world, clone]);
      // Meanwhile a task is added on the accepted branch: the clone is now one commit behind.
      const added = await genesis(['task', 'add', 'b', '--world', world, '--title', 'module b', '--paths', 'src/b.js']);
      expect(added.code, added.stderr).toBe(0);
      // The person edits the clone's world.yaml, which does not have task b, at the very lines b was added to.
      const yaml = await readFile(join(clone, 'world.yaml'), 'utf8');
      await writeFile(join(clone, 'world.yaml'), `${yaml}  - { id: d, title: "module d", paths: [src/d.js] }\n`);
      const before = await refsOf(world);

      const refused = await genesis(['amend', '--world', world, '--from', clone, '--message', 'plan d']);
      const { problem, hint } = expectOneClearError(refused, 'amend-conflict');
      expect(problem).toMatch(
        /was made on [0-9a-f]{12}, 1 accepted commit\(s\) behind the head [0-9a-f]{12}, and it conflicts with what landed since in world\.yaml/,
      );
      expect(hint).toMatch(/git pull there.*--force/);
      expect(await refsOf(world)).toBe(before);

      // What the person would get by landing the tree as it is: task b gone. Only with --force, and said aloud.
      const forced = await genesis(['amend', '--world', world, '--from', clone, '--message', 'plan d, dropping b', '--force']);
      expect(forced.code, forced.stderr).toBe(0);
      expect(forced.stderr).toMatch(
        /warning: .*1 accepted commit\(s\) behind the head [0-9a-f]{12}: --force lands its tree as it is, undoing what landed since/,
      );
      const [head] = await readAcceptedHistory(world, 'main');
      expect(head!.subject).toBe('plan d, dropping b');
      expect(await tasksAt(head!.commit)).toEqual(['a', 'd']);
    },
  );

  itWith('bwrap')('a clone made before a task was added, changing other files, is merged onto the head and keeps the task', async () => {
    const clone = join(root, 'clone-2');
    execFileSync('git', ['clone', '-q', world, clone]);
    const added = await genesis(['task', 'add', 'e', '--world', world, '--title', 'module e', '--paths', 'src/e.js']);
    expect(added.code, added.stderr).toBe(0);
    // Its world.yaml is the old one, without task e: landed as it is, it would revert the task just added.
    await writeFile(join(clone, 'NOTES.md'), 'notes\n');
    const amended = await genesis(['amend', '--world', world, '--from', clone, '--message', 'notes']);
    expect(amended.code, amended.stderr).toBe(0);
    expect(amended.stderr).toMatch(/merged three-way onto the head, keeping what landed since/);
    const [head] = await readAcceptedHistory(world, 'main');
    expect(await tasksAt(head!.commit)).toContain('e');
    expect(execFileSync('git', ['--git-dir', world, 'show', `${head!.commit}:NOTES.md`], { encoding: 'utf8' })).toBe('notes\n');
  });
});
