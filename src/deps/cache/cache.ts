import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { lstat, mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { GenesisError } from '../../errors/genesis-error.js';
import type { DepsSpec } from '../../manifest/schema.js';
import { chooseEvictions } from './evict.js';
import { summarizeTree } from '../fingerprint.js';
import { processAlive, tryLock } from './lock.js';
import { normalizeTreePath } from '../../manifest/deps-rules.js';
import { networkFailureKind } from '../offline-env.js';
import { defaultDepsCacheCap, defaultDepsCacheRoot } from './root.js';
import type { InstallResult, InstallSpec } from '../installers/install-spec.js';
import { findOutputLinkProblem } from '../output-links.js';
import { ProvenSets } from './proven-sets.js';

const execFileAsync = promisify(execFile);

/** What a prepared set records about itself (`<set>/meta.json`). */
export interface DepsSetMeta {
  key: string;
  files: string[];
  install: string;
  paths: string[];
  environment: string;
  createdAt: string;
  installMs: number;
  bytes: number;
  entries: number;
  fingerprint: string;
}

export interface CachedSet extends DepsSetMeta {
  /** The directory holding the outputs (`<set>/out`), each at its path relative to the tree. */
  dir: string;
  lastUsedMs: number;
}

export interface PrepareRequest {
  key: string;
  files: ReadonlyArray<{ path: string; content: Buffer }>;
  spec: DepsSpec;
  environment: string;
  image: string;
  /** Runs the install in the sandbox the world's gate uses. */
  install: (spec: InstallSpec) => Promise<InstallResult>;
  /** Told what a long wait is on (a sentence), and null when it ends: for progress displays. */
  onWait?: (what: string | null) => void;
  /**
   * A set already prepared is returned at once, with `intact` proving it unchanged while the
   * caller works, instead of being proven before it is returned: the caller must not give a
   * verdict from it before `intact` is true, and asks again without this when it is false.
   */
  proveBeside?: boolean;
}

export type PrepareOutcome =
  | {
      ok: true;
      key: string;
      dir: string;
      hit: boolean;
      durationMs: number;
      log: string;
      /** With proveBeside on a hit: true once the set is proven unchanged, false when it changed after it was prepared. */
      intact?: Promise<boolean>;
    }
  | { ok: false; key: string; reason: 'deps-failed'; message: string; log: string };

export interface DepsCacheOptions {
  /** @default defaultDepsCacheRoot() */
  root?: string;
  /** @default defaultDepsCacheCap() */
  capBytes?: number;
  /** Sets used this recently are never evicted. @default one hour */
  graceMs?: number;
}

/**
 * The machine's cache of prepared dependency sets, one directory per key:
 *
 *   <root>/sets/<key>/meta.json, used, out/<paths>   complete sets, read-only outputs
 *   <root>/staging/<key>.<pid>.<random>/              installs in progress (removed by gc)
 *   <root>/locks/<key>.lock                           the one preparer of a key
 *
 * A set is prepared in staging and renamed into `sets/` only once complete, so a crash never
 * leaves a half-prepared set where a gate would use it; a set changed after it was prepared
 * (its fingerprint differs) is thrown away and prepared again.
 */
export class DepsCache {
  readonly root: string;
  readonly capBytes: number;
  readonly graceMs: number;
  private readonly proven = new ProvenSets();

  constructor(options: DepsCacheOptions = {}) {
    this.root = options.root ?? defaultDepsCacheRoot();
    this.capBytes = options.capBytes ?? defaultDepsCacheCap();
    this.graceMs = options.graceMs ?? 60 * 60 * 1000;
  }

  setDir(key: string): string {
    return join(this.root, 'sets', key);
  }

  /** The prepared set of `key`, installing it first when this machine has none. */
  async ensure(request: PrepareRequest): Promise<PrepareOutcome> {
    const started = Date.now();
    await this.makeDirs();
    const deadline = started + request.spec.timeoutSec * 1000 + 120_000;
    let notes = '';
    let waitingOnOther = false;
    const short = request.key.slice(0, 12);
    try {
      const beside = request.proveBeside ? await this.readSet(request.key) : null;
      if (beside) {
        await this.touch(request.key);
        return {
          ok: true,
          key: request.key,
          dir: beside.dir,
          hit: true,
          durationMs: Date.now() - started,
          log: `deps: ${short} already prepared on this machine (proven unchanged while the gate runs)\n`,
          intact: this.proven.isUnchanged(beside),
        };
      }
      for (;;) {
        const found = await this.readUsable(request.key);
        if (found.set) {
          await this.touch(request.key);
          return {
            ok: true,
            key: request.key,
            dir: found.set.dir,
            hit: true,
            durationMs: Date.now() - started,
            log: `${notes}deps: ${request.key.slice(0, 12)} already prepared on this machine\n`,
          };
        }
        if (found.damaged)
          notes += `deps: the prepared set ${request.key.slice(0, 12)} changed after it was prepared (a tool wrote into it?); preparing it again\n`;
        const lock = await tryLock(join(this.root, 'locks', `${request.key}.lock`));
        if (lock) {
          try {
            if ((await this.readUsable(request.key)).set) continue;
            request.onWait?.(`dependency set ${short} being installed (${request.spec.install})`);
            const outcome = await this.prepare(request, started);
            return outcome.ok ? { ...outcome, log: notes + outcome.log } : { ...outcome, log: notes + outcome.log };
          } finally {
            await lock.release();
          }
        }
        if (Date.now() > deadline) {
          return {
            ok: false,
            key: request.key,
            reason: 'deps-failed',
            message: `another process has been preparing dependency set ${request.key.slice(0, 12)} for longer than verify.deps.timeoutSec`,
            log: notes,
          };
        }
        if (!waitingOnOther) request.onWait?.(`dependency set ${short}, which another gate or process on this machine is installing`);
        waitingOnOther = true;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    } finally {
      request.onWait?.(null);
    }
  }

  private async prepare(request: PrepareRequest, started: number): Promise<PrepareOutcome> {
    const staging = join(this.root, 'staging', `${request.key}.${process.pid}.${randomBytes(4).toString('hex')}`);
    const work = join(staging, 'work');
    try {
      for (const file of request.files) {
        await mkdir(dirname(join(work, file.path)), { recursive: true });
        await writeFile(join(work, file.path), file.content);
      }
      const result = await request.install({
        workDir: work,
        command: request.spec.install,
        timeoutMs: request.spec.timeoutSec * 1000,
        memoryMb: request.spec.memoryMb,
        image: request.image,
      });
      const log = `$ ${request.spec.install}   [deps ${request.key.slice(0, 12)}]\n${result.output}${result.output.endsWith('\n') ? '' : '\n'}[exit ${result.exitCode}${result.timedOut ? ', timed out' : ''} after ${(result.durationMs / 1000).toFixed(2)}s]\n`;
      if (result.exitCode !== 0) {
        const why = result.timedOut ? `ran out of verify.deps.timeoutSec (${request.spec.timeoutSec}s)` : `failed (exit ${result.exitCode})`;
        const network = networkFailureKind(result.output);
        const where = network
          ? ` (${network} inside the install's sandbox: check that this machine reaches the registry, and under docker that containers on Docker's bridge network reach the outside)`
          : '';
        return { ok: false, key: request.key, reason: 'deps-failed', message: `the dependency install \`${request.spec.install}\` ${why}${where}`, log };
      }
      const linked = await findOutputLinkProblem(work, request.spec.paths.map(normalizeTreePath));
      if (linked)
        return {
          ok: false,
          key: request.key,
          reason: 'deps-failed',
          message: `the dependency install \`${request.spec.install}\` left ${linked}; a set is stored only when its outputs are real files and directories and their links stay inside them`,
          log,
        };
      const set = join(staging, 'set');
      const missing: string[] = [];
      for (const path of request.spec.paths.map(normalizeTreePath)) {
        const produced = await lstat(join(work, path)).catch(() => null);
        if (!produced) {
          missing.push(path);
          continue;
        }
        await mkdir(dirname(join(set, 'out', path)), { recursive: true });
        await rename(join(work, path), join(set, 'out', path));
      }
      if (missing.length > 0) {
        const message = `the dependency install \`${request.spec.install}\` succeeded but did not produce ${missing.map((m) => `"${m}"`).join(', ')}; fix verify.deps.paths (what the install writes, relative to the tree) or the install command`;
        return { ok: false, key: request.key, reason: 'deps-failed', message, log };
      }
      await makeReadOnly(join(set, 'out'));
      const summary = await summarizeTree(join(set, 'out'));
      const meta: DepsSetMeta = {
        key: request.key,
        files: request.files.map((f) => f.path),
        install: request.spec.install,
        paths: request.spec.paths.map(normalizeTreePath),
        environment: request.environment,
        createdAt: new Date().toISOString(),
        installMs: result.durationMs,
        ...summary,
      };
      await writeFile(join(set, 'meta.json'), `${JSON.stringify(meta, null, 2)}\n`);
      await writeFile(join(set, 'used'), '');
      // The one step that makes the set visible: a directory rename, atomic on one filesystem.
      await rename(set, this.setDir(request.key));
      await this.evict(new Set([request.key])).catch(() => undefined);
      return { ok: true, key: request.key, dir: join(this.setDir(request.key), 'out'), hit: false, durationMs: Date.now() - started, log };
    } finally {
      await removeTree(staging);
    }
  }

  /** Every complete set, newest use first. */
  async list(): Promise<CachedSet[]> {
    const keys = await readdir(join(this.root, 'sets')).catch(() => [] as string[]);
    const sets: CachedSet[] = [];
    for (const key of keys) {
      const set = await this.readSet(key);
      if (set) sets.push(set);
    }
    return sets.sort((a, b) => b.lastUsedMs - a.lastUsedMs);
  }

  /** Removes one set; true when it existed. */
  async remove(key: string): Promise<boolean> {
    const dir = this.setDir(key);
    this.proven.forget(join(dir, 'out'));
    if (!(await stat(dir).catch(() => null))) return false;
    const trash = join(this.root, 'staging', `trash-${key}.${process.pid}.${randomBytes(4).toString('hex')}`);
    await mkdir(join(this.root, 'staging'), { recursive: true });
    await rename(dir, trash);
    await removeTree(trash);
    return true;
  }

  /**
   * Collects garbage: leftovers of installs whose process died, then least-recently-used sets
   * until the cache fits `capBytes` (sets used within `graceMs` are kept).
   */
  async gc(options: { capBytes?: number; graceMs?: number } = {}): Promise<{ removed: string[]; staging: number }> {
    let staging = 0;
    for (const name of await readdir(join(this.root, 'staging')).catch(() => [] as string[])) {
      const pid = Number(name.split('.').at(-2));
      if (Number.isInteger(pid) && pid !== process.pid && processAlive(pid)) continue;
      if (pid === process.pid) continue;
      await removeTree(join(this.root, 'staging', name));
      staging++;
    }
    const removed = await this.evict(new Set(), options);
    return { removed, staging };
  }

  private async evict(keep: ReadonlySet<string>, options: { capBytes?: number; graceMs?: number } = {}): Promise<string[]> {
    const sets = await this.list();
    const chosen = chooseEvictions(sets, { capBytes: options.capBytes ?? this.capBytes, graceMs: options.graceMs ?? this.graceMs, now: Date.now(), keep });
    for (const key of chosen) await this.remove(key);
    return chosen;
  }

  private async makeDirs(): Promise<void> {
    try {
      for (const sub of ['sets', 'staging', 'locks']) await mkdir(join(this.root, sub), { recursive: true });
      const probe = join(this.root, 'staging', `.probe-${process.pid}`);
      await writeFile(probe, '');
      await rm(probe, { force: true });
    } catch (cause) {
      throw new GenesisError('deps-cache-unwritable', `the dependency cache ${this.root} cannot be written: ${(cause as Error).message}`, {
        hint: 'set GENESIS_CACHE_DIR to a directory this user can write (the cache goes to $GENESIS_CACHE_DIR/deps), or fix the permissions of the one named',
        cause,
      });
    }
  }

  private async readSet(key: string): Promise<CachedSet | null> {
    const dir = this.setDir(key);
    try {
      const meta = JSON.parse(await readFile(join(dir, 'meta.json'), 'utf8')) as DepsSetMeta;
      const used = await stat(join(dir, 'used')).catch(() => null);
      return { ...meta, dir: join(dir, 'out'), lastUsedMs: used?.mtimeMs ?? Date.parse(meta.createdAt) };
    } catch {
      return null;
    }
  }

  /** The set when it is complete and unchanged; a changed one is removed and reported. */
  private async readUsable(key: string): Promise<{ set: CachedSet | null; damaged: boolean }> {
    const set = await this.readSet(key);
    if (!set) return { set: null, damaged: false };
    if (await this.proven.isUnchanged(set)) return { set, damaged: false };
    await this.remove(key).catch(() => undefined);
    return { set: null, damaged: true };
  }

  private async touch(key: string): Promise<void> {
    const now = new Date();
    await utimes(join(this.setDir(key), 'used'), now, now).catch(() => undefined);
  }
}

/** Outputs are read by every gate's user and written by nobody: root's (when root), a+rX, a-w. */
async function makeReadOnly(dir: string): Promise<void> {
  if (process.getuid?.() === 0) await execFileAsync('chown', ['-R', '-h', '0:0', dir]);
  await execFileAsync('chmod', ['-R', 'a+rX,a-w', dir]);
}

/** Removes a tree that may hold read-only directories (their owner must make them writable first). */
async function removeTree(dir: string): Promise<void> {
  if (!(await stat(dir).catch(() => null))) return;
  if (process.getuid?.() !== 0) await execFileAsync('chmod', ['-R', 'u+w', dir]).catch(() => undefined);
  await rm(dir, { recursive: true, force: true });
}
