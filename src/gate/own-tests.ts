/**
 * Which tests of the accepted head a change may make vanish: those defined in files it is allowed
 * to change and did change. `tests-vanished` guards the tests a candidate cannot edit (the
 * protected ones), which only broken or cheating code can stop reporting; a test the change
 * renames, reorders or deletes in its own files is the change's business, and an agent told that
 * 72 renamed tests "vanished" can do nothing but fail again.
 *
 * A test's file is known when its name starts with one: a path (node-tap names a file's tests
 * after it, JUnit's classname is the file for vitest and jest, pytest's node id) or a Python
 * module (`tests.test_calc.TestGroup`, from pytest's JUnit and unittest). Otherwise it is found by
 * what the runner reports of it, in a file the change edited and in no protected file, as the
 * accepted content writes it: its title as a string literal (node --test, tape), its suites' and
 * its own titles as literals that mocha joins with spaces (`bodyParser() should parse JSON`), or a
 * function of its name (go's `func TestX(`, cargo's `fn it_adds(`, Python's `def test_x(`).
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
/** A Python module, perhaps with a class after it (`tests.test_calc.TestGroup`). */
const PYTHON_DOTTED = /^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$/;
const IDENTIFIER = /^[A-Za-z_]\w*$/;
/** A string literal on one line, in any of JavaScript's three quotes or Python's two, no escapes inside. */
const LITERAL = /'([^'\\\n]{0,300})'|"([^"\\\n]{0,300})"|`([^`\\\n]{0,300})`/g;
/** Longer than any title a suite tree makes. */
const MAX_TITLE = 2000;

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
    const file = fileNamed(name, files);
    if (file !== null) {
      if (editedSet.has(file)) own.add(name);
    } else byLeaf.push(name);
  }
  if (byLeaf.length === 0) return own;
  const editedTexts = (await Promise.all(edited.map(textOf))).filter((t): t is string => t !== null);
  const inEdited = byLeaf.filter((name) => editedTexts.some((text) => definesTest(text, name)));
  if (inEdited.length === 0) return own;
  const protectedTexts = (await Promise.all([...files.keys()].filter((p) => matchesAny(p, input.protectedPaths)).map(textOf))).filter(
    (t): t is string => t !== null,
  );
  for (const name of inEdited) if (!protectedTexts.some((text) => definesTest(text, name))) own.add(name);
  return own;
}

/** The file a test's name starts with: a path of the tree, or a Python module's file (its dotted path, less classes). */
function fileNamed(name: string, files: ReadonlyMap<string, number>): string | null {
  const first = (name.split(SEGMENT)[0] ?? '').replace(/^(\.\/)+/, '');
  if (PATH_LIKE.test(first) && files.has(first)) return first;
  if (!PYTHON_DOTTED.test(first)) return null;
  const parts = first.split('.');
  for (let end = parts.length; end > 0; end -= 1) {
    const path = `${parts.slice(0, end).join('/')}.py`;
    if (files.has(path)) return path;
  }
  return null;
}

const leafOf = (name: string): string => name.split(SEGMENT).at(-1) ?? name;

/** Whether a file's text defines the test the runner reported by this name (see the file's comment). */
function definesTest(text: string, name: string): boolean {
  const leaf = leafOf(name);
  if (holdsLiteral(text, leaf)) return true;
  // A parametrized case (`test_param[2-3]`) or a go subtest (`TestSub/negative`) is defined by its function.
  const bracket = leaf.indexOf('[');
  const fn = (bracket === -1 ? leaf : leaf.slice(0, bracket)).split('/')[0] ?? '';
  if (IDENTIFIER.test(fn) && [`def ${fn}(`, `func ${fn}(`, `fn ${fn}(`].some((definition) => text.includes(definition))) return true;
  return !name.includes(SEGMENT) && joinsLiterals(text, name);
}

/**
 * True when `name` is string literals of `text` joined with single spaces (mocha's full title:
 * `describe('bodyParser()')` then `it('should parse JSON')`), the last one ending it. Read in one
 * pass over the text for its literals and one over the name's positions: no pattern backtracks.
 */
function joinsLiterals(text: string, name: string): boolean {
  if (name.length > MAX_TITLE) return false;
  const literals = new Set<string>();
  for (const match of text.matchAll(LITERAL)) {
    const literal = match[1] ?? match[2] ?? match[3] ?? '';
    if (literal !== '' && name.includes(literal)) literals.add(literal);
  }
  if (literals.size === 0) return false;
  // reachable[i]: name[0, i) is literals joined by spaces, and a literal may start at i.
  const reachable = new Array<boolean>(name.length + 1).fill(false);
  reachable[0] = true;
  for (let i = 0; i < name.length; i += 1) {
    if (!reachable[i]) continue;
    for (const literal of literals) {
      if (!name.startsWith(literal, i)) continue;
      const end = i + literal.length;
      if (end === name.length) return true;
      if (name[end] === ' ') reachable[end + 1] = true;
    }
  }
  return false;
}

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
