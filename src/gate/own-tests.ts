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
 * accepted content writes it: its title as a string literal (node --test, tape), the call of an
 * assertion method that tape names a message-less assertion after (`t.deepEqual(a, b)`: "should
 * be deeply equivalent", see attribution/tape-default-names.ts), its suites' and
 * its own titles as literals that mocha joins with spaces (`bodyParser() should parse JSON`), a
 * function of its name (go's `func TestX(`, cargo's `fn it_adds(`, Python's `def test_x(`), or
 * literals of several files that write the name end to end (a helper's words around a one-word
 * title: attribution/composed-names.ts).
 */
import { readText } from '../git/object-reader.js';
import { matchesAny } from '../manifest/path-patterns.js';
import type { ChangedEntry } from '../git/tree/diff.js';
import type { TestBaseline } from './test-baseline.js';
import { compositionOf, type PiecesByKind, piecesOf } from './attribution/composed-names.js';
import { fileNamed, SCRIPT, SEARCH_LIMIT, testDefinition, treeFiles } from './attribution/test-definitions.js';

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
  const inEdited = new Map<string, 'whole' | 'part'>();
  for (const name of byLeaf) {
    const how = strongest(editedTexts.map((text) => testDefinition(text, name)));
    if (how) inEdited.set(name, how);
  }
  const protectedPaths = [...files.keys()].filter((p) => matchesAny(p, input.protectedPaths));
  const protectedTexts = (await Promise.all(protectedPaths.map(textOf))).filter((t): t is string => t !== null);
  // A name no edited file writes whole may be written with pieces of several files (a helper's
  // words around a test file's one-word title): the other script files hold the helper's.
  const composed = new Set(byLeaf.filter((name) => inEdited.get(name) !== 'whole' && !name.includes(SEGMENT)));
  const pieces = composed.size === 0 ? null : await piecesByKind(files, editedSet, protectedPaths, editedTexts, protectedTexts, textOf);
  for (const name of byLeaf) {
    const how = inEdited.get(name);
    const guarded = strongest(protectedTexts.map((text) => testDefinition(text, name)));
    // A protected file keeps a name guarded when it defines it at least as wholly as an edited file
    // does: one that only holds a phrase of a title an edited file writes whole (a suite title two
    // files share) does not claim it, while a name only built around phrases, or written with a
    // protected file's piece (a one-word title handed to an edited helper), stays guarded by any.
    if (how === 'whole') {
      if (guarded !== 'whole') own.add(name);
      continue;
    }
    const composition = pieces && composed.has(name) ? compositionOf(name, pieces) : null;
    const editable = how === 'part' || composition?.byEditable === true;
    if (editable && guarded === null && composition?.protectedPiece !== true) own.add(name);
  }
  return own;
}

/** The pieces names may be written with (attribution/composed-names.ts), by the kind of file that holds them. */
async function piecesByKind(
  files: ReadonlyMap<string, number>,
  edited: ReadonlySet<string>,
  protectedPaths: readonly string[],
  editedTexts: readonly string[],
  protectedTexts: readonly string[],
  textOf: (path: string) => Promise<string | null>,
): Promise<PiecesByKind> {
  const guarded = new Set(protectedPaths);
  const others = [...files.keys()].filter((p) => SCRIPT.test(p) && !edited.has(p) && !guarded.has(p));
  const otherTexts = (await Promise.all(others.map(textOf))).filter((t): t is string => t !== null);
  const union = (texts: readonly string[]): Set<string> => new Set(texts.flatMap((t) => [...piecesOf(t)]));
  return new Map([
    ['edited', union(editedTexts)],
    ['protected', union(protectedTexts)],
    ['other', union(otherTexts)],
  ]);
}

const SEGMENT = ' > ';

const strongest = (found: ReadonlyArray<'whole' | 'part' | null>): 'whole' | 'part' | null =>
  found.includes('whole') ? 'whole' : found.includes('part') ? 'part' : null;
