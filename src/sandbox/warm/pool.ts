import { mkdtemp, readdir, rmdir } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import Docker from 'dockerode';
import type { Container, ContainerCreateOptions } from 'dockerode';
import { describeInit, type WarmInit } from './init.js';
import { prepareSlot, removeSlot, slotPaths, type SlotPaths } from './mounts.js';
import { probeReuse, type ReuseState } from './reset.js';
import type { SandboxUser } from '../gate/work-dir.js';
import { isAlive } from '../process/process-alive.js';
import { leaseUid, type UidLease } from '../process/uid-leases.js';

/** Label of pooled containers (besides genesis.sandbox=warm): which process made them, `host/pid`. */
export const WARM_OWNER_LABEL = 'genesis.warm.owner';
/** Label naming the pool (within its process) a container belongs to. */
export const WARM_POOL_LABEL = 'genesis.warm.pool';
/** Label saying how a pooled container serves gates: `once`, or `reuse` (gate after gate, reset between: warm-reset.ts). */
export const WARM_MODE_LABEL = 'genesis.warm.mode';
let pools = 0;
const ROOT_PREFIX = 'genesis-warm-';

/** A started container waiting for its command, with the slot directory it was made for. */
export interface WarmSlot {
  key: string;
  container: Container;
  paths: SlotPaths;
  /** Its first process as the host sees it (warm-init.ts), or null: then a run learns of its end from the daemon only. */
  init: WarmInit | null;
  /** For a container that serves gate after gate: what resets it between them; null for one used once. */
  reuse: ReuseState | null;
  /**
   * The uid a one-use container was made to run as, leased for it alone until it is removed;
   * null for a reused one, whose launcher runs each gate as the uid leased for that gate.
   */
  user: SandboxUser | null;
  lease?: UidLease;
}

/** How to make a slot's container: the create options for that slot's paths and the user a one-use container runs as. */
export type SlotRecipe = (paths: SlotPaths, user: SandboxUser) => ContainerCreateOptions;

/** How a slot's container serves gates (warm-sandbox.ts): once, or gate after gate. */
type SlotMode = 'once' | 'reuse';

export interface WarmPoolOptions {
  docker?: Docker;
  /** Started containers kept ready per key at first; a key whose runs overlap beyond it gets more, up to `max`. @default 2 */
  perKey?: number;
  /** Ready (or being made) containers across all keys. @default 8 */
  max?: number;
  /** A key's ready containers are removed after this long without a gate taking one. @default 600_000 (10 min: an agent may think for minutes between gates) */
  idleMs?: number;
  /** Gates a reused container serves before it is replaced (bounds whatever a reset might not take away). @default 64 */
  maxUses?: number;
  /** False: every container serves one gate and is removed, as before containers were reused. @default true */
  reuse?: boolean;
}

export interface WarmPoolStats {
  /** Runs that took a ready container. */
  hits: number;
  /** Runs that found none (they made their own, as without a pool). */
  misses: number;
  /** Containers the pool made; `retired` of them are removed. */
  made: number;
  retired: number;
  /** Slots that could not be made or used (the pool turns itself off when they cannot work here). */
  failures: number;
  /** Runs whose end the host saw itself (the launcher's status, its first process gone), not waiting for the daemon's report. */
  seenExits: number;
  /** Runs served by a container that had served another gate before. */
  reused: number;
  /** Containers that could not be reset after a gate (a process would not die), removed instead of reused. */
  resetFailures: number;
}

interface KeyState {
  ready: WarmSlot[];
  making: number;
  /** Containers back from a gate whose reset is still under way, one promise each: ready for the refill's count, and awaited by a take that finds none ready. */
  resets: Set<Promise<void>>;
  /** Containers to keep ready: perKey, raised by runs that found none while others ran (up to max). */
  target: number;
  recipe: SlotRecipe;
  mode: SlotMode;
  idle?: NodeJS.Timeout;
}

/**
 * A bounded pool of gate containers created and started ahead, each waiting for its command
 * (docker-warm.ts). A container serves one run at a time: where the host and image allow
 * it, run after run with everything the last one left taken away between them (warm-reset.ts),
 * up to `maxUses`; else one run, then it is removed. What it was created with (image id, limits,
 * environment, network) is its key, so a run only ever gets a container made for the same
 * settings; the user is not: a reused container runs each gate as the uid leased for that gate,
 * and a one-use container runs as a uid the pool leased for it alone (so no two live containers,
 * nor a container and any other sandbox, share a uid). The pool refills in the background, one container
 * at a time per key, and keeps nothing it cannot account for: every container is labelled with
 * its owner process; `drain` removes all of them; the first use removes those of processes on
 * this host that are gone (killed before they could drain), with their slot directories.
 */
export class WarmPool {
  private client: Docker | undefined;
  private readonly perKey: number;
  private readonly max: number;
  private readonly idleMs: number;
  private readonly maxUses: number;
  private readonly reuse: boolean;
  /** Keys whose containers cannot be reused here, and why (the first reason seen). */
  private readonly refused = new Map<string, string>();
  private readonly keys = new Map<string, KeyState>();
  private readonly pending = new Set<Promise<unknown>>();
  private readonly owner = `${hostname()}/${process.pid}`;
  private readonly id = String(++pools);
  private root: Promise<string> | undefined;
  private next = 0;
  private off = false;
  private draining = false;
  /** Containers that could not be made, in a row. */
  private failedInRow = 0;
  /** Pooled runs under way (taken, not yet released). */
  private running = 0;
  readonly stats: WarmPoolStats = { hits: 0, misses: 0, made: 0, retired: 0, failures: 0, seenExits: 0, reused: 0, resetFailures: 0 };

  constructor(options: WarmPoolOptions = {}) {
    this.client = options.docker;
    this.perKey = options.perKey ?? 2;
    this.max = options.max ?? 8;
    this.idleMs = options.idleMs ?? 600_000;
    this.maxUses = options.maxUses ?? 64;
    this.reuse = options.reuse ?? true;
  }

  /** Made on first use: the environment (DOCKER_HOST) then is the one that counts. */
  get docker(): Docker {
    this.client ??= new Docker();
    return this.client;
  }

  /** The labels a pooled container carries. */
  get labels(): Record<string, string> {
    return { [WARM_OWNER_LABEL]: this.owner, [WARM_POOL_LABEL]: this.id };
  }

  /** False once making or using a container failed here (no mount rights, a daemon in another mount namespace). */
  get usable(): boolean {
    return !this.off && this.perKey > 0;
  }

  /**
   * A ready container for `key` (one whose reset is under way, once it passed), or null (the caller runs without the pool). Either way the key's
   * ready set is refilled in the background from `recipe`, once no pooled run is under way: made
   * while gates run, containers would take the cores from them (measured: six gates at once were
   * no faster with six ready containers than with two while the refill ran beside them).
   * A taken slot goes back through `release`.
   */
  async take(key: string, recipe: SlotRecipe, mode: SlotMode): Promise<WarmSlot | null> {
    if (!this.usable) return null;
    let state = this.keys.get(key);
    if (!state) {
      state = { ready: [], making: 0, resets: new Set(), target: this.perKey, recipe, mode };
      this.keys.set(key, state);
    }
    // A container still being reset after its last gate's verdict is worth the wait: the reset takes
    // milliseconds, a container of its own for this gate hundreds.
    while (state.ready.length === 0 && state.resets.size > 0) await Promise.race(state.resets);
    if (!this.usable) return null;
    const slot = state.ready.shift() ?? null;
    if (slot) this.stats.hits++;
    else this.stats.misses++;
    if (slot?.reuse && slot.reuse.uses > 0) this.stats.reused++;
    // More gates at once than containers ready: keep one more ready from now on.
    if (!slot && this.running > 0) state.target = Math.min(this.max, state.target + 1);
    if (slot) this.running++;
    this.refill(key, state);
    return slot;
  }

  /**
   * A taken slot whose run ended. A reused container that was reset (`reusable`, or what `reusable`
   * resolves to when it is the rest of a reset, which only the next gate needs and so runs after
   * its run's verdict) goes back to the front of its key's ready set until it has served `maxUses`
   * gates; any other is removed. When no other run is under way the pool refills.
   */
  release(slot: WarmSlot, reusable: boolean | (() => Promise<boolean>) = false): void {
    this.running--;
    const state = this.keys.get(slot.key);
    if (typeof reusable === 'boolean' || !state || !this.mayServeAgain(slot)) this.settle(slot, reusable !== false);
    else {
      const reset: Promise<void> = reusable()
        .catch(() => false)
        .then((ok) => {
          state.resets.delete(reset);
          if (!ok) this.stats.resetFailures++;
          this.settle(slot, ok);
        });
      state.resets.add(reset);
      this.track(reset);
    }
    if (this.running > 0) return;
    for (const [key, keyState] of this.keys) this.refill(key, keyState);
  }

  /** Resolves once no container is being reset after its gate (each is ready again, or removed). */
  async settled(): Promise<void> {
    for (const state of this.keys.values()) await Promise.all(state.resets);
  }

  /** A slot whose reset is known: ready again, or removed. */
  private settle(slot: WarmSlot, reusable: boolean): void {
    const state = this.keys.get(slot.key);
    if (reusable && this.mayServeAgain(slot) && state) state.ready.unshift(slot);
    else this.retire(slot);
  }

  private mayServeAgain(slot: WarmSlot): boolean {
    return slot.reuse !== null && slot.reuse.uses < this.maxUses && this.usable && !this.draining;
  }

  /** Whether containers made for `key` are not to be reused (turned off, or its first container said it cannot be): then the caller asks for one-use containers. */
  refusesReuse(key: string): boolean {
    return !this.reuse || this.refused.has(key);
  }

  /** Why containers are not reused here, one reason per settings key that found out. */
  reuseRefusals(): string[] {
    return [...this.refused.values()];
  }

  /** A slot that served its run (or could not): its container and directory go, in the background. */
  retire(slot: WarmSlot): void {
    this.track(this.remove(slot));
  }

  /** Turns the pool off (a slot could not be made or used here) and removes what it holds. */
  disable(): void {
    if (this.off) return;
    this.off = true;
    this.stats.failures++;
    void this.drainReady();
  }

  /**
   * Removes every ready container and waits for every removal and creation under way; nothing is
   * made meanwhile. The pool stays usable: a later run refills it (and a later drain empties it).
   */
  async drain(): Promise<void> {
    this.draining = true;
    try {
      await this.drainReady();
    } finally {
      this.draining = false;
    }
    const root = await this.root?.catch(() => undefined);
    if (root && this.readyCount === 0) await rmdir(root).catch(() => undefined);
  }

  /** Whether a container is being made for some key now. */
  get filling(): boolean {
    return [...this.keys.values()].some((s) => s.making > 0);
  }

  /** Whether the pool holds containers, or is making or removing some. */
  get busy(): boolean {
    return this.pending.size > 0 || this.readyCount > 0;
  }

  /** The directory of this pool's slots, once it made one. */
  get directory(): Promise<string | undefined> {
    return this.root?.catch(() => undefined) ?? Promise.resolve(undefined);
  }

  /** How many containers are ready, across keys: a container being reset after its gate counts (a take waits for it), as long as its reset has not failed. */
  get readyCount(): number {
    return [...this.keys.values()].reduce((n, s) => n + s.ready.length + s.resets.size, 0);
  }

  private async drainReady(): Promise<void> {
    while (this.pending.size > 0 || this.readyCount > 0) {
      for (const state of this.keys.values()) {
        clearTimeout(state.idle);
        for (const slot of state.ready.splice(0)) this.retire(slot);
      }
      await Promise.allSettled([...this.pending]);
    }
  }

  private get total(): number {
    return [...this.keys.values()].reduce((n, s) => n + s.ready.length + s.making + s.resets.size, 0);
  }

  private refill(key: string, state: KeyState): void {
    clearTimeout(state.idle);
    state.idle = setTimeout(() => {
      for (const slot of state.ready.splice(0)) this.retire(slot);
    }, this.idleMs);
    state.idle.unref();
    // One at a time per key, and none while a pooled run is under way: it would slow the gates that run.
    if (this.draining || this.running > 0 || state.making > 0 || state.ready.length + state.resets.size >= state.target || this.total >= this.max) return;
    state.making++;
    const made = this.make(key, state.recipe, state.mode).then(
      (slot) => {
        state.making--;
        if (!slot) return;
        if (!this.usable || this.draining) return this.retire(slot);
        state.ready.push(slot);
        this.refill(key, state);
      },
      () => {
        state.making--;
      },
    );
    this.track(made);
  }

  private async make(key: string, recipe: SlotRecipe, mode: SlotMode): Promise<WarmSlot | null> {
    const paths = slotPaths(join(await this.rootDir(), String(this.next++)));
    // A one-use container's first process runs as its gate's user from the start: a uid of its own, held while it lives.
    let lease: UidLease | undefined;
    try {
      lease = mode === 'once' ? leaseUid() : undefined;
    } catch {
      return null; // every uid is held: the run goes the fresh way, which says so
    }
    const user = lease ? { uid: lease.uid, gid: lease.uid } : null;
    const options = recipe(paths, user ?? { uid: 0, gid: 0 });
    const own = { user, ...(lease ? { lease } : {}) };
    let container: Container | undefined;
    try {
      await prepareSlot(paths, `${options.User ?? '0'}`);
    } catch {
      this.disable(); // no mount rights here: slots cannot be made at all
      await removeSlot(paths);
      lease?.release();
      return null;
    }
    try {
      container = await this.docker.createContainer(options);
      this.stats.made++;
      await container.start();
      this.failedInRow = 0;
      const pid = await container.inspect().then(
        (info) => info.State.Pid,
        () => 0,
      );
      const slot: WarmSlot = { key, container, paths, init: await describeInit(pid), reuse: null, ...own };
      if (options.Labels?.[WARM_MODE_LABEL] !== 'reuse') return slot;
      const probe = slot.init?.oomFile ? await probeReuse(pid, '/work') : { ok: false as const, reason: 'OOM kills cannot be counted' };
      if (probe.ok) return { ...slot, reuse: probe.state };
      // Not reusable here: runs of this key ask for one-use containers from now on.
      this.refused.set(key, probe.reason);
      await this.remove(slot);
      return null;
    } catch {
      // A daemon restarting fails a few in a row and then works again; one that keeps failing turns the pool off.
      this.stats.failures++;
      if (++this.failedInRow >= 3) this.disable();
      if (container) await this.remove({ key, container, paths, init: null, reuse: null, ...own });
      else {
        await removeSlot(paths);
        lease?.release();
      }
      return null;
    }
  }

  private async remove(slot: WarmSlot): Promise<void> {
    // Its processes are gone once a forced removal succeeded: the uid is free for another sandbox (else it is held until this process ends).
    await slot.container.remove({ force: true }).then(
      () => slot.lease?.release(),
      () => undefined,
    );
    this.stats.retired++;
    await removeSlot(slot.paths);
  }

  private track(work: Promise<unknown>): void {
    const tracked = work.catch(() => undefined).finally(() => this.pending.delete(tracked));
    this.pending.add(tracked);
  }

  /** This process's slot root, made on first use, after clearing what dead processes left. */
  private rootDir(): Promise<string> {
    this.root ??= removeStale(this.docker).then(() => mkdtemp(join(tmpdir(), `${ROOT_PREFIX}${process.pid}-`)));
    return this.root;
  }
}

/**
 * Removes pooled containers whose owner process on this host is gone, then the slot directories
 * of gone processes (a slot is removed file by file, never recursively: see removeSlot).
 */
export async function removeStale(docker: Docker): Promise<number> {
  let removed = 0;
  const listed = await docker.listContainers({ all: true, filters: { label: [WARM_OWNER_LABEL] } }).catch(() => []);
  for (const info of listed) {
    const [host, pid] = (info.Labels[WARM_OWNER_LABEL] ?? '').split('/');
    if (host !== hostname() || isAlive(Number(pid))) continue;
    await docker
      .getContainer(info.Id)
      .remove({ force: true })
      .then(
        () => removed++,
        () => undefined,
      );
  }
  const entries = await readdir(tmpdir()).catch(() => [] as string[]);
  for (const name of entries) {
    const pid = Number(/^genesis-warm-(\d+)-/.exec(name)?.[1]);
    if (!pid || isAlive(pid)) continue;
    const root = join(tmpdir(), name);
    const slots = await readdir(root).catch(() => [] as string[]);
    for (const slot of slots) await removeSlot(slotPaths(join(root, slot)));
    await rmdir(root).catch(() => undefined);
  }
  return removed;
}

let shared: WarmPool | null | undefined;

/**
 * The process's pool for gate containers, or null where there is none: Genesis not root (slots
 * are mounts), or `GENESIS_WARM_SANDBOXES=0`; that variable also sets how many containers are
 * kept ready per key (default 2). `GENESIS_WARM_REUSE=0` has each container serve one gate. Drained when the process runs out of work (`beforeExit`), or
 * by whoever calls `drain`; a process killed before that leaves containers that the next one's
 * first use removes.
 */
export function sharedWarmPool(): WarmPool | null {
  if (shared !== undefined) return shared;
  const perKey = Number(process.env.GENESIS_WARM_SANDBOXES ?? 2);
  if (process.getuid?.() !== 0 || !Number.isInteger(perKey) || perKey <= 0) {
    shared = null;
    return shared;
  }
  const pool = new WarmPool({ perKey, max: Math.max(8, perKey * 2), reuse: process.env.GENESIS_WARM_REUSE !== '0' });
  // Fires again once the drain is done; by then the pool is idle and the process exits.
  process.on('beforeExit', () => {
    if (pool.busy) void pool.drain();
  });
  shared = pool;
  return shared;
}
