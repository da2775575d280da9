/**
 * Whose each passing test of a step that runs several checks together is. The runner names a test
 * by its titles alone (node --test does not say which file it came from), and a check's baseline
 * must hold only the tests its own run reports: a reopened task's check runs alone, and a test of
 * the check beside it that "vanished" from that run would reject the task for nothing.
 *
 * A test is a check's when that check's files, and no other check's, define it (its name starts
 * with one of them, or one of them writes its title: see test-definitions.ts). A test that no
 * check's files define (a title built at run time, a test registered by a shared helper) or that
 * several define (one title in two files) is no one's: the checks it may belong to are then run
 * alone, and their own runs are their baselines. A file too big to read may define anything.
 */
import { readText } from '../../git/object-reader.js';
import { testPathsOf } from '../plan.js';
import { definesTest, fileNamed, SCRIPT, SEARCH_LIMIT, treeFiles } from './test-definitions.js';

/** One check of the step: its own command and the script files its paths hold (text null: too big to read). */
export interface CheckFiles {
  command: string;
  files: ReadonlyArray<{ path: string; text: string | null }>;
}

/** Each check's own passing tests (by command, each name once), and the checks whose tests only a run of their own can tell. */
export interface CheckOwners {
  owned: Record<string, string[]>;
  runAlone: string[];
}

/** Attributes a run's passing names to the checks that ran together (see the file's comment). Pure. */
export function ownersOfTests(names: readonly string[], checks: readonly CheckFiles[], tree: ReadonlyMap<string, number>): CheckOwners {
  const owned = new Map<string, Set<string>>(checks.map((c) => [c.command, new Set()]));
  const alone = new Set<string>();
  for (const name of new Set(names)) {
    const file = fileNamed(name, tree);
    const owners = checks.filter((c) =>
      file !== null ? c.files.some((f) => f.path === file) : c.files.some((f) => f.text === null || definesTest(f.text, name)),
    );
    if (owners.length === 1) owned.get(owners[0]!.command)!.add(name);
    else for (const c of owners.length === 0 ? checks : owners) alone.add(c.command);
  }
  const runAlone = checks.map((c) => c.command).filter((c) => alone.has(c));
  const kept = checks.filter((c) => !alone.has(c.command)).map((c) => [c.command, [...owned.get(c.command)!].sort()]);
  return { owned: Object.fromEntries(kept), runAlone };
}

/** Each command's script files in a tree, read through git: what {@link ownersOfTests} reads. */
export async function readCheckFiles(repo: string, tree: string, commands: readonly string[]): Promise<{ checks: CheckFiles[]; tree: Map<string, number> }> {
  const files = await treeFiles(repo, tree);
  const checks = await Promise.all(
    commands.map(async (command) => {
      const paths = testPathsOf(command) ?? [];
      const held = [...files.keys()].filter((f) => SCRIPT.test(f) && paths.some((p) => p === '.' || p === '' || f === p || f.startsWith(`${p}/`)));
      const read = held.map(async (path) => ({
        path,
        text: (files.get(path) ?? Number.POSITIVE_INFINITY) <= SEARCH_LIMIT ? await readText(repo, `${tree}:${path}`) : null,
      }));
      return { command, files: await Promise.all(read) };
    }),
  );
  return { checks, tree: files };
}
