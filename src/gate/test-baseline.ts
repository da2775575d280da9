/**
 * The tests that pass on a tree, by name, per gate command: what a change on top of that tree
 * must still report passing. A change that makes a passing test vanish (a file that exits before
 * its tests run, a test skipped from inside the code, a runner killed half-way) fails the gate
 * with `tests-vanished`, whatever the exit code says.
 *
 * Kept per tree in the world's scratch directory (`baselines/<tree>.json`), written by every gate
 * that passes (its tree is what lands) and computed on demand for a tree that has none (the
 * first commit, or a worker that did not run that gate).
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { COUNTED_NAME } from './reports/vitest.js';

/** Passing test names per gate command. */
export type TestBaseline = Record<string, string[]>;

const fileOf = (scratchDir: string, tree: string): string => join(scratchDir, 'baselines', `${tree}.json`);

/** The baseline stored for a tree, or an empty one. */
export async function loadBaseline(scratchDir: string, tree: string): Promise<TestBaseline> {
  try {
    const parsed = JSON.parse(await readFile(fileOf(scratchDir, tree), 'utf8')) as unknown;
    if (typeof parsed !== 'object' || parsed === null) return {};
    const entries = Object.entries(parsed as Record<string, unknown>).filter(
      (e): e is [string, string[]] => Array.isArray(e[1]) && e[1].every((n) => typeof n === 'string'),
    );
    return Object.fromEntries(entries);
  } catch {
    return {};
  }
}

/**
 * The names that passed under `keys` (the commands of checks a gate runs together: a test that
 * passed in one of them must pass in their run together), or undefined when none is known. Each
 * command holds its own check's tests (a run together keeps each test under the check whose files
 * define it, see attribution/check-owners.ts), so a name two checks hold is held twice: their
 * paths never overlap, and the run together reports it once for each.
 */
export function passingUnder(baseline: TestBaseline, keys: readonly string[]): string[] | undefined {
  const known = [...new Set(keys)].filter((k) => Object.hasOwn(baseline, k));
  if (known.length === 0) return undefined;
  return known.flatMap((key) => baseline[key]!).sort();
}

function countsOf(names: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const name of names) counts.set(name, (counts.get(name) ?? 0) + 1);
  return counts;
}

/** Adds commands to a tree's stored baseline (a write then a rename: readers never see half a file). */
export async function saveBaseline(scratchDir: string, tree: string, baseline: TestBaseline): Promise<void> {
  if (Object.keys(baseline).length === 0) return;
  const merged = { ...(await loadBaseline(scratchDir, tree)), ...baseline };
  const file = fileOf(scratchDir, tree);
  await mkdir(join(scratchDir, 'baselines'), { recursive: true });
  const temp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  await writeFile(temp, JSON.stringify(merged));
  await rename(temp, file);
}

/**
 * Names that passed on the base and are not reported as the rule asks on the candidate.
 * @param reported the candidate's names by outcome for the same command
 * @param allowFailing ratchet mode's test step: a test may fail (the score judges that), not vanish
 */
export function vanishedTests(
  basePassing: readonly string[],
  reported: { passed: readonly string[]; failed: readonly string[] },
  allowFailing: boolean,
): string[] {
  const all = [...reported.passed, ...(allowFailing ? reported.failed : [])];
  const present = new Set(all);
  // A name listed twice (checks run together, two files holding a test of that name) must be reported twice.
  const left = countsOf(all);
  // A runner that names no passing test (vitest's default reporter) is held to its count per file.
  const counted = new Map<string, string[]>();
  const vanished: string[] = [];
  for (const name of basePassing) {
    const file = COUNTED_NAME.exec(name)?.[1];
    if (file !== undefined) counted.set(file, [...(counted.get(file) ?? []), name]);
    else if ((left.get(name) ?? 0) > 0) left.set(name, left.get(name)! - 1);
    else vanished.push(name);
  }
  for (const [file, names] of counted) {
    const reportedThere = [...present].filter((n) => n.startsWith(`${file} > `)).length;
    const byNumber = names.sort((a, b) => Number(COUNTED_NAME.exec(a)?.[2]) - Number(COUNTED_NAME.exec(b)?.[2]));
    vanished.push(...byNumber.slice(reportedThere));
  }
  return vanished;
}

const endedOf = (scratchDir: string, tree: string): string => join(scratchDir, 'baselines', `${tree}.none`);

/**
 * Says the gate judging this tree has ended (or will not report): what its baseline holds now is all
 * that will come. A gate waiting for a command it lacks learns that command itself instead of
 * waiting out its deadline (a passing gate stores only the commands of its own plan, and a change
 * behind it may run more: the checks of tasks done since).
 */
export async function markBaselineFinal(scratchDir: string, tree: string): Promise<void> {
  await mkdir(join(scratchDir, 'baselines'), { recursive: true });
  await writeFile(endedOf(scratchDir, tree), '');
}

/**
 * Waits until a tree's baseline holds every command asked for (the gate judging that tree, still
 * running, stores it when it passes), until that gate is known to have ended without them, or until `deadline`.
 * Returns the baseline, or null when it will not come in time.
 */
export async function waitForBaseline(
  scratchDir: string,
  tree: string,
  commands: readonly string[],
  deadline: number,
  pollMs = 100,
): Promise<TestBaseline | null> {
  for (;;) {
    const known = await loadBaseline(scratchDir, tree);
    if (commands.every((c) => c in known)) return known;
    const gaveUp = await readFile(endedOf(scratchDir, tree)).then(
      () => true,
      () => false,
    );
    if (gaveUp || Date.now() >= deadline) return null;
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

const scoredOf = (scratchDir: string, tree: string): string => join(scratchDir, 'baselines', `${tree}.scored.json`);

/**
 * The test names a ratchet world's score counts on a tree: the names the test step reported (any
 * outcome) on the world's first commit or its last amendment, handed on unchanged from each
 * accepted tree to the next. A name a change brings in (a test it registers) raises no score
 * until a person lands it with `genesis amend`. Null when this machine has no record for the tree.
 */
export async function loadScoredNames(scratchDir: string, tree: string): Promise<string[] | null> {
  try {
    const parsed = JSON.parse(await readFile(scoredOf(scratchDir, tree), 'utf8')) as unknown;
    return Array.isArray(parsed) && parsed.every((n) => typeof n === 'string') ? parsed : null;
  } catch {
    return null;
  }
}

/** Stores the names a tree's score counts (a write then a rename). */
export async function saveScoredNames(scratchDir: string, tree: string, names: readonly string[]): Promise<void> {
  const file = scoredOf(scratchDir, tree);
  await mkdir(join(scratchDir, 'baselines'), { recursive: true });
  const temp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  await writeFile(temp, JSON.stringify([...new Set(names)].sort()));
  await rename(temp, file);
}
