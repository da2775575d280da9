import { git, gitValue } from '../git/git.js';
import { readText, resolveObject } from '../git/object-reader.js';

/** Where `genesis calibrate` keeps its figures: a ref, so a mirror clone carries them with the ledger. */
export const CALIBRATION_REF = 'refs/genesis/calibration';

/** A rate measured by counting, with its 95% Wilson interval. */
export interface MeasuredRate {
  rate: number;
  low: number;
  high: number;
  /** What was counted (rejections, or mutants caught) out of how many. */
  count: number;
  of: number;
  /** When, and on which accepted head. */
  measuredAt: string;
  head: string;
}

/**
 * The verifier's two terms of the reliability model, measured on the world's own project: f, the
 * gate's false-rejection rate (the project's own commits, replayed, that it rejected), and d, its
 * recall (mutants of the head it rejected). Either may be missing until measured.
 */
export interface Calibration {
  falseRejection?: MeasuredRate;
  recall?: MeasuredRate;
}

export async function readCalibration(repo: string): Promise<Calibration | null> {
  if (!(await resolveObject(repo, `${CALIBRATION_REF}^{commit}`))) return null;
  const text = await readText(repo, `${CALIBRATION_REF}:calibration.json`);
  if (text === null) return null;
  try {
    return JSON.parse(text) as Calibration;
  } catch {
    return null;
  }
}

/** Records new figures over the old (a calibration of f alone keeps the d measured before), as a new commit on the ref. */
export async function writeCalibration(repo: string, update: Calibration): Promise<Calibration> {
  const previous = await readCalibration(repo);
  const next: Calibration = { ...previous, ...update };
  const blob = await gitValue(['hash-object', '-w', '--stdin'], { cwd: repo, input: `${JSON.stringify(next, null, 2)}\n` });
  const tree = await gitValue(['mktree'], { cwd: repo, input: `100644 blob ${blob}\tcalibration.json\n` });
  const parent = (await resolveObject(repo, `${CALIBRATION_REF}^{commit}`))?.sha;
  const commit = await gitValue(['commit-tree', tree, ...(parent ? ['-p', parent] : []), '-m', 'genesis calibrate'], { cwd: repo });
  await git(['update-ref', CALIBRATION_REF, commit, ...(parent ? [parent] : [])], { cwd: repo });
  return next;
}
