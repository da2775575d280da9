import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findEgressTools, findNetnsTools, netnsResolvConf, type NetnsTools } from './network-namespace.js';
import { agentNetnsMarker, AGENT_NETNS_PREFIX, removeStaleAgentNetns } from './leftovers.js';
import { NetnsSlot } from './slot.js';
import { hostAddressGuard } from './host-address-guard.js';

export interface AgentNetnsPoolOptions {
  /** Namespaces kept ready. @default 2 */
  size?: number;
  /** Ready namespaces are closed after this long without an agent taking one. @default 600_000 */
  idleMs?: number;
  /** The programs to use; found on PATH on first use when absent. */
  tools?: Required<NetnsTools>;
}

export interface AgentNetnsPoolStats {
  /** Launches that took a ready namespace. */
  hits: number;
  /** Launches that found none (they made their own at launch, as without a pool). */
  misses: number;
  /** Namespaces made; `closed` of them are gone. */
  made: number;
  closed: number;
  /** Namespaces that could not be made (three in a row turn the pool off). */
  failures: number;
}

/** How long a launch that took a namespace waits before the pool makes the next (so it does not slow that launch). */
const REFILL_DELAY_MS = 1_000;

/**
 * A small pool of agent network namespaces made ahead of their launches (NetnsSlot: slirp4netns
 * and the packet filter already set), so an agent's start pays for bubblewrap, not for wiring a
 * network. Each namespace serves exactly one agent and is closed after it; its filter was made for
 * this host's networks as they were (hostNetworks()), so once a network is added (a new Docker
 * bridge) no namespace made before is handed out (those ready are closed). Where namespaces
 * cannot be made (not root, a tool missing, no rights), the pool turns itself off and every
 * launch makes its own.
 *
 * Nothing outlives the process: each namespace ends with the pipes this process holds to it (see
 * NetnsSlot), `drain` closes every one, and the first use removes what a killed process left
 * (agent-netns-leftovers.ts).
 */
export class AgentNetnsPool {
  private readonly size: number;
  private readonly idleMs: number;
  private tools: Promise<Required<NetnsTools>> | undefined;
  private dir: Promise<string> | undefined;
  private ready: NetnsSlot[] = [];
  private making: Promise<NetnsSlot | null> | null = null;
  /** This host's networks at the last take: what a namespace's filter must reject to serve. */
  private networks: readonly string[] | null = null;
  private off = false;
  private draining = false;
  private failedInRow = 0;
  private idle: NodeJS.Timeout | undefined;
  private later: NodeJS.Timeout | undefined;
  /** Namespaces taken and not yet released: their agents may still bind the resolver file. */
  private out = 0;
  private readonly closing = new Set<Promise<void>>();
  readonly stats: AgentNetnsPoolStats = { hits: 0, misses: 0, made: 0, closed: 0, failures: 0 };

  constructor(options: AgentNetnsPoolOptions = {}) {
    this.size = options.size ?? 2;
    this.idleMs = options.idleMs ?? 600_000;
    if (options.tools) this.tools = Promise.resolve(options.tools);
  }

  /** False once namespaces proved impossible to make here. */
  get usable(): boolean {
    return !this.off && this.size > 0;
  }

  /** How many namespaces are ready now. */
  get readyCount(): number {
    return this.ready.length;
  }

  /** The processes of the ready namespaces (their holders and slirp4netns), for tests of what a crash leaves. */
  readyPids(): number[] {
    return this.ready.flatMap((slot) => slot.pids);
  }

  /** The resolver configuration every pooled agent reads (slirp4netns's DNS forwarder). */
  async resolvConf(): Promise<string> {
    return join(await this.directory(), 'resolv.conf');
  }

  /**
   * A ready namespace filtered against `blocked` (this host's networks now), or null: then the
   * caller makes one at launch, as without a pool. One being made is waited for rather than made
   * twice. The pool refills in the background; a taken namespace goes back through `release`.
   */
  async take(blocked: readonly string[]): Promise<NetnsSlot | null> {
    if (!this.usable) return null;
    this.setNetworks(blocked);
    let slot = this.takeReady();
    if (!slot && this.making !== null) slot = await this.making.then(() => this.takeReady());
    if (!slot) {
      this.stats.misses++;
      this.refill();
      return null;
    }
    this.stats.hits++;
    this.out++;
    clearTimeout(this.later);
    this.later = setTimeout(() => this.refill(), REFILL_DELAY_MS);
    this.later.unref();
    return slot;
  }

  /**
   * A namespace whose agent ended: it is closed in the background (`drain` waits for it), and the
   * pool refills. Nothing runs in it any more: the agent's processes are gone with its launcher.
   */
  release(slot: NetnsSlot): void {
    this.out--;
    void this.close(slot);
    this.refill();
  }

  /**
   * Makes `count` namespaces ready now for `blocked` (the first launches then find them ready);
   * resolves when they are, or cannot be. @default count the pool's size
   */
  async fill(blocked: readonly string[], count = this.size): Promise<void> {
    this.setNetworks(blocked);
    const want = Math.min(count, this.size);
    for (let i = 0; i <= want && this.usable && this.ready.length < want; i++) {
      if (this.making === null) this.makeOne(false);
      await this.making;
    }
  }

  /** Closes every ready namespace and waits for those being made and closed; a later take refills. */
  async drain(): Promise<void> {
    this.draining = true;
    clearTimeout(this.later);
    clearTimeout(this.idle);
    try {
      while (this.making !== null || this.ready.length > 0 || this.closing.size > 0) {
        await this.making;
        this.closeReady();
        await Promise.all([...this.closing]);
      }
      // Kept while an agent that took a namespace may still start (it binds the resolver file).
      const dir = this.out === 0 ? await this.dir?.catch(() => undefined) : undefined;
      if (dir) {
        this.dir = undefined;
        await rm(dir, { recursive: true, force: true });
      }
    } finally {
      this.draining = false;
    }
  }

  /** Whether the pool holds namespaces, or is making or closing some. */
  get busy(): boolean {
    return this.ready.length > 0 || this.making !== null || this.closing.size > 0;
  }

  /**
   * This host's networks now. A network added since a namespace was made is not in its filter:
   * that namespace must not serve, and is closed. One that went away is still rejected, which is
   * harmless, so the namespace stays.
   */
  private setNetworks(networks: readonly string[]): void {
    this.networks = networks;
    for (const slot of this.ready.filter((s) => !s.covers(networks))) {
      this.ready.splice(this.ready.indexOf(slot), 1);
      void this.close(slot);
    }
  }

  private takeReady(): NetnsSlot | null {
    for (let slot = this.ready.shift(); slot; slot = this.ready.shift()) {
      if (slot.alive && slot.covers(this.networks ?? [])) return slot;
      void this.close(slot);
    }
    return null;
  }

  private refill(): void {
    clearTimeout(this.idle);
    this.idle = setTimeout(() => this.closeReady(), this.idleMs);
    this.idle.unref();
    if (this.ready.length < this.size) this.makeOne(true);
  }

  /**
   * Starts making one namespace for this host's networks now, unless one is being made (one at a
   * time); with `more`, then the next, until the pool is full.
   */
  private makeOne(more: boolean): void {
    const networks = this.networks;
    if (this.off || this.draining || this.making !== null || networks === null) return;
    this.making = this.make(networks).then((slot) => {
      this.making = null;
      if (!slot) return null;
      if (this.off || this.draining || !slot.covers(this.networks ?? [])) {
        void this.close(slot);
        return null;
      }
      this.ready.push(slot);
      if (more) this.refill();
      return slot;
    });
  }

  private async make(blocked: readonly string[]): Promise<NetnsSlot | null> {
    try {
      const tools = await this.findTools();
      await this.directory();
      const guard = await hostAddressGuard(tools.iptablesRestore);
      const slot = await NetnsSlot.make({ tools, blocked, marker: agentNetnsMarker(), ...(guard ? { cgroupDir: guard.cgroupDir } : {}) });
      this.stats.made++;
      this.failedInRow = 0;
      return slot;
    } catch {
      this.stats.failures++;
      // A tool missing or no rights fail every time; a loaded machine now and then.
      if (++this.failedInRow >= 3) this.off = true;
      return null;
    }
  }

  private findTools(): Promise<Required<NetnsTools>> {
    this.tools ??= (async () => {
      if (process.getuid?.() !== 0) this.off = true;
      return { ...(await findNetnsTools()), ...(await findEgressTools()) };
    })();
    this.tools.catch(() => {
      this.off = true;
    });
    return this.tools;
  }

  /** This process's directory (the resolver file), made on first use after clearing what dead processes left. */
  private directory(): Promise<string> {
    this.dir ??= removeStaleAgentNetns().then(async () => {
      const dir = await mkdtemp(join(tmpdir(), `${AGENT_NETNS_PREFIX}${process.pid}-`));
      await writeFile(join(dir, 'resolv.conf'), netnsResolvConf());
      return dir;
    });
    return this.dir;
  }

  private closeReady(): void {
    for (const slot of this.ready.splice(0)) void this.close(slot);
  }

  private close(slot: NetnsSlot): Promise<void> {
    const closing = slot.close().then(() => {
      this.stats.closed++;
      this.closing.delete(closing);
    });
    this.closing.add(closing);
    return closing;
  }
}

let shared: AgentNetnsPool | null | undefined;

/**
 * The process's pool of agent network namespaces, or null where there is none: Genesis not root
 * (the filter needs root; an unprivileged agent's namespace also needs a user namespace made with
 * it), or `GENESIS_WARM_AGENTS=0`; that variable also sets how many are kept ready (default 2).
 * Drained when the process runs out of work (`beforeExit`).
 */
export function sharedAgentNetnsPool(): AgentNetnsPool | null {
  if (shared !== undefined) return shared;
  const size = Number(process.env.GENESIS_WARM_AGENTS ?? 2);
  if (process.getuid?.() !== 0 || !Number.isInteger(size) || size <= 0) {
    shared = null;
    return shared;
  }
  const pool = new AgentNetnsPool({ size });
  process.on('beforeExit', () => {
    if (pool.busy) void pool.drain();
  });
  shared = pool;
  return shared;
}
