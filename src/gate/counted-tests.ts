/**
 * Which passing tests a ratchet world's score counts: those the first commit or the last
 * amendment reported by name ({@link loadScoredNames}), and those the accepted head's protected
 * files define (a protected test that did not load on the first commit, because it imports a
 * module not written yet, counts once it passes). A test that the candidate's own code registers
 * (five passing tests per file, made at import) is neither, and raises no score until a person
 * lands it with `genesis amend`.
 *
 * A test is defined by a protected file when that file calls `test`/`it` with its name as a string
 * literal, or defines it as a Python function. When the name starts with a file (vitest's and
 * jest's JUnit classname, pytest's dotted module, node-tap), that file must be protected and
 * define it itself: every test registered while a protected test file loads carries that file's
 * name, so the file alone says nothing about who wrote the test.
 */
import { readText } from '../git/object-reader.js';
import { matchesAny } from '../manifest/path-patterns.js';
import { treeFiles } from './attribution/test-definitions.js';

/** A protected file bigger than this (a bundle, a fixture) is not read for test names. */
const SEARCH_LIMIT = 1024 * 1024;
const SEGMENT = ' > ';
/** A first segment that is a file, not a suite: a path or a source file (vitest, jest, node-tap), or pytest's dotted test module. */
const NAMES_A_FILE = /\/|\.[cm]?[jt]sx?$|\.py$|^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*\.(test_\w*|\w*_test)$/;

/** Is this passing test counted? */
export type CountsTest = (name: string) => boolean;

/** The rule for a head, or null when neither the scored names nor the protected paths are known (every test counts). */
export async function countedTests(
  repo: string,
  head: string,
  scored: readonly string[] | null,
  protectedPaths: readonly string[],
): Promise<CountsTest | null> {
  if (scored === null) return null;
  const names = new Set(scored);
  const defined = new Map<string, ReadonlySet<string> | null>();
  for (const [path, size] of await protectedFiles(repo, head, protectedPaths))
    defined.set(path, size <= SEARCH_LIMIT ? definedNames((await readText(repo, `${head}:${path}`)) ?? '') : null);
  const anywhere = new Set([...defined.values()].flatMap((set) => [...(set ?? [])]));
  return (name) => names.has(name) || definedIn(name, defined, anywhere);
}

/** A test's name as a string literal opening a `test`/`it`/`specify` call (to its line's end, or this long), or a Python `def`. */
const DEFINITION = /\b(?:test|it|specify)(?:\.\w+)*\s*\(\s*(['"`])((?:(?!\1)[^\n]){0,4096})\1|\bdef (\w+)\s*\(/g;

/**
 * The test names a file defines, read once: looking each reported name up in every file took the
 * number of names the code under test registers times the protected files' size.
 */
function definedNames(text: string): ReadonlySet<string> {
  const names = new Set<string>();
  for (const m of text.matchAll(DEFINITION)) names.add((m[2] ?? m[3]) as string);
  return names;
}

/** Whether a protected file defines the test: the file the name starts with when it names one, else any. */
function definedIn(name: string, files: ReadonlyMap<string, ReadonlySet<string> | null>, anywhere: ReadonlySet<string>): boolean {
  const segments = name.split(SEGMENT);
  const last = segments.at(-1) ?? name;
  // A parameterised test's `[id]` is no part of the name its file defines (from the first '[', as `/\[.*\]$/` cut it).
  const leaf = last.endsWith(']') && last.includes('[') ? last.slice(0, last.indexOf('[')) : last;
  if (leaf === '') return false;
  const first = (segments[0] ?? '').replace(/^(\.\/)+/, '');
  const file = [first, `${first.replaceAll('.', '/')}.py`].find((path) => files.has(path));
  if (file !== undefined) return segments.length > 1 && (files.get(file)?.has(leaf) ?? false);
  // A file the change may write (a test file of its own) names a test of a protected file's name for nothing.
  if (segments.length > 1 && NAMES_A_FILE.test(first)) return false;
  return anywhere.has(leaf);
}

/** The head's files under its protected paths, with their sizes. */
async function protectedFiles(repo: string, head: string, protectedPaths: readonly string[]): Promise<Map<string, number>> {
  return new Map([...(await treeFiles(repo, head))].filter(([path]) => matchesAny(path, protectedPaths)));
}
