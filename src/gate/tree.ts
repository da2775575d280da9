import { execFile } from 'node:child_process';
import type { Dirent } from 'node:fs';
import { readdir, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { GenesisError } from '../errors/genesis-error.js';
import { exportTree } from '../git/tree/export.js';
import { matchesAny } from '../manifest/path-patterns.js';
import { discardTree, removeTree } from '../sandbox/process/remove-tree.js';

const execFileAsync = promisify(execFile);

/** Steps that prepare the tree for the ones after them: what they write is kept. */
export const PREPARING_STEPS: ReadonlySet<string> = new Set(['setup', 'build']);

/**
 * One tree as the gate sees it. It is exported once into a pristine copy; every step run (and
 * every re-run) gets a fresh copy of it at the gate's work dir, so nothing a test wrote survives
 * into the next run: code that rewrites itself or its test in a first run finds the original in
 * the "flaky" re-run. Only a preparing step that passed (setup, build) moves the pristine copy
 * on. The protected paths present in the tree are listed once, for the sandbox to mount read-only.
 *
 * While the pristine copy is still a small tree's export as written (no dependency layout, no
 * preparing step kept), a run needs no copy of it: the first run takes the export itself, a later
 * one gets a new export of the same tree with the same time on every entry (cheaper than `cp -a`,
 * and alike to the run, which may judge by times: a test that is flaky by its age sees the
 * re-run as later, as it would a copy). A larger tree is copied as before.
 */
export class GateTree {
  /** The pristine copy holds only what the export wrote. */
  private asExported = true;
  /** A run took the export itself: the pristine copy is gone until a later run or a layout needs it. */
  private taken = false;

  private constructor(
    private readonly repo: string,
    private readonly tree: string,
    private readonly pristine: string,
    /** The time on every entry of the export, or null when git archive wrote it (then runs get copies). */
    private readonly stamp: Date | null,
    /** Where each run happens: the same path every time (the sandbox user is chosen by path). */
    readonly workDir: string,
    /** Protected files and directories of the tree, relative to the work dir. */
    readonly readOnlyPaths: string[],
  ) {}

  static async export(repo: string, tree: string, workDir: string, protectedPatterns: readonly string[]): Promise<GateTree> {
    const pristine = `${workDir}.tree`;
    await Promise.all([discardTree(pristine), discardTree(workDir)]);
    const stamp = new Date();
    const written = await exportTree(repo, tree, pristine, stamp);
    return new GateTree(repo, tree, pristine, written === 'stamped' ? stamp : null, workDir, await protectedPathsIn(pristine, protectedPatterns));
  }

  /** A fresh copy of the pristine tree at the work dir, for one run. */
  async fresh(): Promise<string> {
    await removeTree(this.workDir);
    if (this.asExported && this.stamp && !this.taken) {
      await rename(this.pristine, this.workDir);
      this.taken = true;
      return this.workDir;
    }
    if (this.asExported && this.stamp && this.taken) {
      await exportTree(this.repo, this.tree, this.workDir, this.stamp);
      return this.workDir;
    }
    try {
      // cp -a keeps modes, owners and links as they are, and is far faster than a copy in Node.
      await execFileAsync('cp', ['-a', '--', this.pristine, this.workDir]);
    } catch (cause) {
      throw new GenesisError('gate-copy-failed', `could not copy the gate's tree to ${this.workDir}`, {
        cause,
        hint: 'check free disk space where the world keeps its scratch directory',
      });
    }
    return this.workDir;
  }

  /**
   * The pristine copy, for what every run should find (a dependency layout) to be put there
   * before the first run: from then on runs get copies of it.
   */
  layoutDir(): string {
    if (this.taken) throw new Error('GateTree.layoutDir: a run already took the export; lay out before the first run');
    this.asExported = false;
    return this.pristine;
  }

  /** After a preparing step passed: its result is what later steps start from. */
  async keep(): Promise<void> {
    await removeTree(this.pristine);
    this.asExported = false;
    this.taken = false;
    try {
      await rename(this.workDir, this.pristine);
    } catch {
      // The work dir is a mount point (a disk quota's tmpfs): copy what it holds instead.
      await execFileAsync('cp', ['-a', '--', this.workDir, this.pristine]);
      await removeTree(this.workDir);
    }
  }

  /** Removes the copies, whatever a command made of them; never throws (a verdict is already reached). */
  async dispose(): Promise<void> {
    await Promise.all([discardTree(this.pristine), discardTree(this.workDir)]);
  }
}

/**
 * The protected paths of an exported tree: a directory whose every possible content is protected
 * (`test/**`, `.genesis`) as one path, so nothing can be added in it either; else each protected
 * file. Symlinks are left out (a mount follows them; the pre-gate keeps them inside the tree).
 */
export async function protectedPathsIn(root: string, patterns: readonly string[]): Promise<string[]> {
  const found: string[] = [];
  if (patterns.length === 0) return found;
  const pending = [''];
  while (pending.length > 0) {
    const dir = pending.pop() as string;
    let entries: Dirent[];
    try {
      entries = await readdir(join(root, dir), { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      const path = dir === '' ? entry.name : `${dir}/${entry.name}`;
      if (entry.isDirectory()) {
        // A name no pattern of a file would single out: matched only by a pattern covering the whole directory.
        if (matchesAny(`${path}/\u0000any`, patterns)) found.push(path);
        else pending.push(path);
      } else if (entry.isFile() && matchesAny(path, patterns)) {
        found.push(path);
      }
    }
  }
  return found.sort();
}
