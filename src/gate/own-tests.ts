/**
 * Which tests of the accepted head a change may make vanish: those defined in files it is allowed
 * to change and did change. `tests-vanished` guards the tests a candidate cannot edit (the
 * protected ones), which only broken or cheating code can stop reporting; a test the change
 * renames, reorders or deletes in its own files is the change's business, and an agent told that
 * 72 renamed tests "vanished" can do nothing but fail again.
 *
 * A test's file is known when its name starts with one (node-tap names a file's tests after it,
 * JUnit's classname is the file for vitest and jest). Otherwise (node --test names no file) it is
 * found by its own name: a file the change edited whose accepted content holds that name as a
 * string literal, and no protected file does.
 */
import { git } from '../git/git.js';
import { readText } from '../git/object-reader.js';
import { matchesAny } from '../manifest/path-patterns.js';
import type { ChangedEntry } from '../git/tree/diff.js';
import type { TestBaseline } from './test-baseline.js';

/** A file bigger than this is not searched for test names (a bundle, a fixture), nor read. */
const SEARCH_LIMIT = 1024 * 1024;
const SEGMENT = ' > ';
// A file path as runners print it: no spaces, an extension that starts with a letter (a version such as 1.2.3 is no file).
const PATH_LIKE = /^(?:\.\/)?[^\s>]+\.[A-Za-z][A-Za-z0-9]{0,5}$/;

export interface OwnTestsInput {
  repo: string;
  /** The accepted head the baseline was learned on. */
  head: string;
  /** What the change did, file by file. */
  changes: readonly ChangedEntry[];
  /** Paths no candidate may change (the head manifest's protected, world.yaml). */
  protectedPaths: readonly string[];
}

/** The baseline without the tests the change owns (see the file's comment); the same object when it owns none. */
export async function withoutOwnTests(baseline: TestBaseline, input: OwnTestsInput): Promise<TestBaseline> {
  const names = [...new Set(Object.values(baseline).flat())];
  if (names.length === 0) return baseline;
  const own = await ownTests(names, input);
  if (own.size === 0) return baseline;
  return Object.fromEntries(Object.entries(baseline).map(([command, list]) => [command, list.filter((n) => !own.has(n))]));
}

async function ownTests(names: readonly string[], input: OwnTestsInput): Promise<Set<string>> {
  // Files the change edited or removed that it may edit: an added file defines no test of the head.
  const edited = input.changes.filter((c) => c.change !== 'added' && !matchesAny(c.path, input.protectedPaths)).map((c) => c.path);
  if (edited.length === 0) return new Set();
  const files = await treeFiles(input.repo, input.head);
  const texts = new Map<string, string | null>();
  const textOf = async (path: string): Promise<string | null> => {
    if (!texts.has(path)) texts.set(path, (files.get(path) ?? Infinity) <= SEARCH_LIMIT ? await readText(input.repo, `${input.head}:${path}`) : null);
    return texts.get(path) ?? null;
  };
  const editedSet = new Set(edited);
  const own = new Set<string>();
  const byLeaf: string[] = [];
  for (const name of names) {
    const first = (name.split(SEGMENT)[0] ?? '').replace(/^(\.\/)+/, '');
    if (PATH_LIKE.test(first) && files.has(first)) {
      if (editedSet.has(first)) own.add(name);
    } else byLeaf.push(name);
  }
  if (byLeaf.length === 0) return own;
  const editedTexts = (await Promise.all(edited.map(textOf))).filter((t): t is string => t !== null);
  const inEdited = byLeaf.filter((name) => editedTexts.some((text) => holdsLiteral(text, leafOf(name))));
  if (inEdited.length === 0) return own;
  const protectedTexts = (await Promise.all([...files.keys()].filter((p) => matchesAny(p, input.protectedPaths)).map(textOf))).filter(
    (t): t is string => t !== null,
  );
  for (const name of inEdited) if (!protectedTexts.some((text) => holdsLiteral(text, leafOf(name)))) own.add(name);
  return own;
}

const leafOf = (name: string): string => name.split(SEGMENT).at(-1) ?? name;

/** True when `text` writes `name` as a string literal, in any of JavaScript's three quotes (or Python's two). */
function holdsLiteral(text: string, name: string): boolean {
  return name !== '' && [`'${name}'`, `"${name}"`, `\`${name}\``].some((quoted) => text.includes(quoted));
}

/** Every file of the head's tree with its size. */
async function treeFiles(repo: string, head: string): Promise<Map<string, number>> {
  const listed = await git(['ls-tree', '-r', '-z', '--long', '--full-tree', head], { cwd: repo });
  const files = new Map<string, number>();
  for (const line of listed.stdout.split('\0')) {
    const tab = line.indexOf('\t');
    if (tab < 0) continue;
    const [, type, , size] = line.slice(0, tab).split(/\s+/);
    if (type === 'blob') files.set(line.slice(tab + 1), Number(size));
  }
  return files;
}
