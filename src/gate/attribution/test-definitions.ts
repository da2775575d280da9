/**
 * Where a test the runner reported by name is defined: the file its name starts with (a path, or a
 * Python module), or the files whose text writes its title (see own-tests.ts and check-owners.ts,
 * which read it to tell whose a test is). Read from the accepted content, never from what a test
 * process printed about itself.
 */
import { git } from '../../git/git.js';
import { callsTapeAssertionNamed } from './tape-default-names.js';

/** A file bigger than this is not searched for test names (a bundle, a fixture), nor read. */
export const SEARCH_LIMIT = 1024 * 1024;
const SEGMENT = ' > ';
/** Files a test runner loads as test scripts (node --test, with or without a TypeScript loader), and a helper of theirs. */
export const SCRIPT = /\.[cm]?[jt]sx?$/;
// A file path as runners print it: no spaces, an extension that starts with a letter (a version such as 1.2.3 is no file).
const PATH_LIKE = /^(?:\.\/)?[^\s>]+\.[A-Za-z][A-Za-z0-9]{0,5}$/;
/** A Python module, perhaps with a class after it (`tests.test_calc.TestGroup`). */
const PYTHON_DOTTED = /^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$/;
const IDENTIFIER = /^[A-Za-z_]\w*$/;
/** A string literal on one line, in any of JavaScript's three quotes or Python's two, no escapes inside. */
export const LITERAL = /'([^'\\\n]{0,300})'|"([^"\\\n]{0,300})"|`([^`\\\n]{0,300})`/g;
/** Longer than any title a suite tree makes. */
const MAX_TITLE = 2000;

/** The file a test's name starts with: a path of the tree, or a Python module's file (its dotted path, less classes). */
export function fileNamed(name: string, files: ReadonlyMap<string, number>): string | null {
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
export function definesTest(text: string, name: string): boolean {
  return testDefinition(text, name) !== null;
}

/**
 * How a file's text defines the test of this name: `whole` when it writes the whole title (a
 * literal, mocha's suite titles joined, the function a case or subtest belongs to, the tape
 * assertion whose default name it is), `part` when it only holds a phrase the name was built
 * around, null when it does not define it.
 */
export function testDefinition(text: string, name: string): 'whole' | 'part' | null {
  const leaf = leafOf(name);
  if (holdsLiteral(text, leaf)) return 'whole';
  // tape names an assertion without a message of its own after its method.
  if (!name.includes(SEGMENT) && callsTapeAssertionNamed(text, name)) return 'whole';
  // A parametrized case (`test_param[2-3]`) or a go subtest (`TestSub/negative`) is defined by its function.
  const bracket = leaf.indexOf('[');
  const fn = (bracket === -1 ? leaf : leaf.slice(0, bracket)).split('/')[0] ?? '';
  if (IDENTIFIER.test(fn) && [`def ${fn}(`, `func ${fn}(`, `fn ${fn}(`].some((definition) => text.includes(definition))) return 'whole';
  if (name.includes(SEGMENT)) return null;
  if (joinsLiterals(text, name)) return 'whole';
  return holdsPhraseOf(text, name) ? 'part' : null;
}

/** Shorter than this, or a single word, a literal is too common to say which test a name is. */
const MIN_PHRASE = 10;

/**
 * True when `name` holds, between word boundaries, a phrase of `text`: a literal of at least
 * {@link MIN_PHRASE} characters and two words. A tape helper builds its assertions' names around
 * the title it is handed (deep-equal's `t.deepEqualTest(a, b, 'equivalent Dates', …)` reports
 * "strict: equivalent Dates are equal (reversed)"): the title is the test's, the words around it
 * the helper's. A test that builds its own name around a value does the same
 * (`'toPrimitive(' + debug(v) + ') returns the same value'`): a literal that starts or ends with
 * punctuation is bounded there already, as a regular expression's \b is. A protected file holding
 * such a phrase keeps guarded a name that no edited file writes whole (own-tests.ts).
 */
function holdsPhraseOf(text: string, name: string): boolean {
  if (name.length > MAX_TITLE) return false;
  for (const match of text.matchAll(LITERAL)) {
    const literal = match[1] ?? match[2] ?? match[3] ?? '';
    if (literal.length < MIN_PHRASE || !literal.trim().includes(' ')) continue;
    for (let at = name.indexOf(literal); at !== -1; at = name.indexOf(literal, at + 1)) {
      const end = at + literal.length;
      const startsWord = WORD.test(literal[0]!) && WORD.test(name[at - 1] ?? ' ');
      const endsWord = WORD.test(literal[literal.length - 1]!) && WORD.test(name[end] ?? ' ');
      if (!startsWord && !endsWord) return true;
    }
  }
  return false;
}

const WORD = /\w/;

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
export async function treeFiles(repo: string, head: string): Promise<Map<string, number>> {
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
