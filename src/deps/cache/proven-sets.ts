import { type FSWatcher, watch } from 'node:fs';
import { statfs } from 'node:fs/promises';
import { summarizeTree } from '../fingerprint.js';

/** What a set's proof needs of it: where its outputs are and what they summed to when it was prepared. */
export interface ProvableSet {
  dir: string;
  fingerprint: string;
}

export interface ProvenSetsOptions {
  /** Sets kept watched at once; the least recently proven beyond it is walked again when next used. @default 8 */
  maxSets?: number;
  /** The walk that proves a set. @default summarizeTree */
  summarize?: typeof summarizeTree;
}

interface Proof {
  fingerprint: string;
  /** No change was reported in any directory of the set since it was walked. */
  clean: boolean;
  watchers: FSWatcher[];
}

/**
 * Filesystems whose changes the kernel reports to this machine's watchers, whoever makes them
 * (statfs magic numbers: ext2-4, xfs, btrfs, tmpfs, overlayfs, zfs, f2fs). A network or FUSE
 * filesystem can be changed from another machine without a word, so there every use is walked.
 */
const LOCAL_FILESYSTEMS: ReadonlySet<number> = new Set([0xef53, 0x58465342, 0x9123683e, 0x01021994, 0x794c7630, 0x2fc12fc1, 0xf2f52010]);

/**
 * The sets this process has proven unchanged, kept proven by the kernel instead of walked again
 * on every use. A set is walked once, each of its directories watched (inotify) before it is
 * read, so a change is either seen by the walk or reported after it: any write, truncation,
 * chmod, chown, new time, new, removed or renamed entry, by any process in any mount namespace,
 * through any path that reaches the set's directories (a workspace's links do). Until one is
 * reported, the walk's answer stands; the first report drops the proof, and the next use walks
 * again. What no watcher sees needs the right to write the set's files, which only its owner has
 * (root's, a-w, see makeReadOnly): a write through a shared mapping, or through a hard link made
 * outside the set; the walk would see those only by their times, which that owner can set too.
 * Where watches cannot be had (a filesystem other machines write, no inotify watches left), every
 * use is walked, as before.
 */
export class ProvenSets {
  private readonly proofs = new Map<string, Proof>();

  private readonly maxSets: number;
  private readonly summarize: typeof summarizeTree;

  constructor(options: ProvenSetsOptions = {}) {
    this.maxSets = options.maxSets ?? 8;
    this.summarize = options.summarize ?? summarizeTree;
  }

  /** Whether the set's outputs are still what was prepared (never rejects: a set that cannot be walked is not). */
  async isUnchanged(set: ProvableSet): Promise<boolean> {
    const proof = this.proofs.get(set.dir);
    if (proof) {
      await reportsSoFar();
      if (proof.clean && proof.fingerprint === set.fingerprint) return true;
      this.forget(set.dir);
    }
    return this.prove(set);
  }

  /** Stops watching a set (removed, or to be prepared again). */
  forget(dir: string): void {
    const proof = this.proofs.get(dir);
    if (!proof) return;
    this.proofs.delete(dir);
    close(proof);
  }

  private async prove(set: ProvableSet): Promise<boolean> {
    const proof: Proof = { fingerprint: set.fingerprint, clean: true, watchers: [] };
    let watching = await isLocal(set.dir);
    const changed = () => {
      proof.clean = false;
      close(proof);
    };
    const watchDir = (dir: string) => {
      if (!watching || !proof.clean) return;
      try {
        const watcher = watch(dir, { persistent: false }, changed);
        watcher.on('error', changed);
        proof.watchers.push(watcher);
      } catch {
        // No inotify watch left (fs.inotify.max_user_watches): this set is walked on every use.
        watching = false;
      }
    };
    const now = await this.summarize(set.dir, watchDir).catch(() => null);
    const unchanged = now?.fingerprint === set.fingerprint;
    if (!unchanged || !watching || !proof.clean) {
      close(proof);
      return unchanged;
    }
    this.proofs.set(set.dir, proof);
    for (const dir of this.proofs.keys()) {
      if (this.proofs.size <= this.maxSets) break;
      this.forget(dir);
    }
    return true;
  }
}

function close(proof: Proof): void {
  for (const watcher of proof.watchers.splice(0)) watcher.close();
}

async function isLocal(dir: string): Promise<boolean> {
  const info = await statfs(dir).catch(() => null);
  return info !== null && LOCAL_FILESYSTEMS.has(info.type);
}

/**
 * Lets the event loop read what the kernel has queued: a change made before this call is
 * reported by the time it resolves (the first turn may be the poll's own callbacks, the second
 * comes after a poll).
 */
async function reportsSoFar(): Promise<void> {
  for (let turn = 0; turn < 2; turn++) await new Promise((resolve) => setImmediate(resolve));
}
