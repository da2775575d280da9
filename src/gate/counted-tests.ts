/**
 * Which passing tests a ratchet world's score counts: those the first commit or the last
 * amendment reported by name ({@link loadScoredNames}), and those the accepted head's protected
 * files define (a protected test that did not load on the first commit, because it imports a
 * module not written yet, counts once it passes). A test that the candidate's own code registers
 * (five passing tests per file, made at import) is neither, and raises no score until a person
 * lands it with `genesis amend`.
 *
 * A test is defined by a protected file when its name starts with that file (node-tap; JUnit's
 * classname from vitest and jest; pytest's dotted module), or when a protected file calls
 * `test`/`it` with its name as a string literal, or defines it as a Python function.
 */
import { git } from '../git/git.js';
import { readText } from '../git/object-reader.js';
import { matchesAny } from '../manifest/path-patterns.js';

/** A protected file bigger than this (a bundle, a fixture) is not read for test names. */
const SEARCH_LIMIT = 1024 * 1024;
const SEGMENT = ' > ';

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
  const files = await protectedFiles(repo, head, protectedPaths);
  const texts: string[] = [];
  for (const [path, size] of files) if (size <= SEARCH_LIMIT) texts.push((await readText(repo, `${head}:${path}`)) ?? '');
  return (name) => names.has(name) || definedIn(name, files, texts);
}

function definedIn(name: string, files: ReadonlyMap<string, number>, texts: readonly string[]): boolean {
  const first = (name.split(SEGMENT)[0] ?? '').replace(/^(\.\/)+/, '');
  if (files.has(first) || files.has(`${first.replaceAll('.', '/')}.py`)) return true;
  const leaf = (name.split(SEGMENT).at(-1) ?? name).replace(/\[.*\]$/, '');
  if (leaf === '') return false;
  const escaped = leaf.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const call = new RegExp(`\\b(?:test|it|specify)(?:\\.\\w+)*\\s*\\(\\s*(['"\`])${escaped}\\1|\\bdef ${escaped}\\s*\\(`);
  return texts.some((text) => call.test(text));
}

/** The head's files under its protected paths, with their sizes. */
async function protectedFiles(repo: string, head: string, protectedPaths: readonly string[]): Promise<Map<string, number>> {
  const listed = await git(['ls-tree', '-r', '-z', '--long', '--full-tree', head], { cwd: repo });
  const files = new Map<string, number>();
  for (const line of listed.stdout.split('\0')) {
    const tab = line.indexOf('\t');
    if (tab < 0) continue;
    const [, type, , size] = line.slice(0, tab).split(/\s+/);
    const path = line.slice(tab + 1);
    if (type === 'blob' && matchesAny(path, protectedPaths)) files.set(path, Number(size));
  }
  return files;
}
