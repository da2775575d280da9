import { type ChildProcess, spawn } from 'node:child_process';
import { open, stat, writeFile, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { GenesisError } from '../../errors/genesis-error.js';
import { egressRules, type NetnsTools } from './network-namespace.js';
import { runCommand } from '../../spawn/spawner.js';

/** How long a slot may take to come up before it is given up (a loaded machine takes ~100 ms). */
const SLOT_START_MS = 10_000;
const HINT = 'nothing to do: the agent starts with a network namespace made at its launch; set GENESIS_WARM_AGENTS=0 to stop preparing them';

/** What a namespace is filtered with, and what names its processes (see agentNetnsMarker). */
export interface NetnsSlotRecipe {
  tools: Required<NetnsTools>;
  /** Networks the filter rejects (hostNetworks()); none when empty. */
  blocked: readonly string[];
  /** The word in the holder's command line that says which process made it. */
  marker: string;
  /** The cgroup slirp4netns is moved into before any agent uses it (the host address guard's); none when absent. */
  cgroupDir?: string;
}

/** The namespaces a slot holds besides the network: fresh ones, so bubblewrap need not make them. */
const KINDS = ['net', 'ipc', 'uts'] as const;
type Kind = (typeof KINDS)[number];

/**
 * The holder of a slot's namespaces: names its UTS namespace `agent` (what bubblewrap's --hostname
 * did), says `up`, and waits for EOF on stdin. `$0` is the marker.
 */
const HOLDER = 'echo agent > /proc/sys/kernel/hostname && echo up && read _';

/**
 * A network namespace made ahead of an agent's launch, wired exactly as agent-netns.ts wires one at
 * launch: slirp4netns with the host's loopback cut off, then the packet filter rejecting this
 * host's own addresses, set before anything can run inside; with it an IPC and a UTS namespace
 * (hostname `agent`) of its own, which bubblewrap would otherwise make at the launch. Serves one
 * agent and is then closed; when nothing else holds them (the agent's processes are gone), the
 * kernel removes the namespaces with everything in them: sockets, routes, counters, the filter,
 * IPC objects.
 *
 * Made from this process, not through a shell: the holder (`unshare --net --ipc --uts`, reading
 * its stdin) and slirp4netns (`--exit-fd`) each end when their pipe from this process closes, which
 * the kernel does when this process dies, even by kill -9. This process holds the namespaces by
 * file descriptors, so a launch joins those very namespaces (`nsenter --net=/proc/<pid>/fd/<fd>`),
 * never ones a reused pid would name.
 */
export class NetnsSlot {
  private closed = false;

  private constructor(
    private readonly holder: ChildProcess,
    private readonly slirp: ChildProcess,
    private readonly ns: Record<Kind, FileHandle>,
    private readonly tools: Required<NetnsTools>,
    /** The networks its filter rejects. */
    private readonly blocked: ReadonlySet<string>,
  ) {}

  /** Whether its filter rejects each of `networks` (it may reject more: this host's networks as they were). */
  covers(networks: readonly string[]): boolean {
    return networks.every((net) => this.blocked.has(net));
  }

  /** The argv that runs `argv` inside this slot's network, IPC and UTS namespaces. */
  enter(argv: readonly string[]): string[] {
    return [this.tools.nsenter, ...KINDS.map((kind) => `--${kind}=${fdPath(this.ns[kind])}`), '--', ...argv];
  }

  /** Whether it can still serve: its holder and slirp4netns run, and it was not closed. */
  get alive(): boolean {
    return !this.closed && running(this.holder) && running(this.slirp);
  }

  /** The processes of the slot (holder, slirp4netns), for tests of what a crash leaves. */
  get pids(): number[] {
    return [this.holder.pid ?? 0, this.slirp.pid ?? 0];
  }

  /** Ends the slot: its processes are killed and the namespaces go with their last user. Safe twice. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await stop(this.holder, this.slirp);
    await closeAll(Object.values(this.ns));
  }

  /**
   * Makes a slot; rejects with `agent-netns-slot-failed` (and leaves nothing running) when a step
   * fails: a missing tool, no rights to make namespaces, slirp4netns or the filter failing.
   */
  static async make(recipe: NetnsSlotRecipe): Promise<NetnsSlot> {
    const { tools } = recipe;
    // stdin is the holder's life line: it ends at EOF, when this process closes it or dies.
    const holder = started(tools.unshare, ['--net', '--ipc', '--uts', '--', '/bin/sh', '-c', HOLDER, recipe.marker], ['pipe', 'pipe', 'pipe']);
    const held: ChildProcess[] = [holder];
    const opened: FileHandle[] = [];
    try {
      await holderUp(holder);
      const ns = await openNamespaces(holder, opened);
      // Its exit fd is a pipe from this process: it ends when the pipe closes.
      const slirp = started(
        tools.slirp4netns,
        ['--configure', '--mtu=65520', '--disable-host-loopback', '--ready-fd=3', '--exit-fd=4', '--netns-type=path', fdPath(ns.net), 'tap0'],
        ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'],
      );
      held.push(slirp);
      await slirpReady(slirp);
      // Before an agent joins the namespace, so every socket slirp4netns opens for it is in the guard's cgroup.
      if (recipe.cgroupDir !== undefined) await writeFile(join(recipe.cgroupDir, 'cgroup.procs'), String(slirp.pid));
      if (recipe.blocked.length > 0) await setFilter(tools, fdPath(ns.net), recipe.blocked);
      for (const child of held) unrefChild(child);
      return new NetnsSlot(holder, slirp, ns, tools, new Set(recipe.blocked));
    } catch (cause) {
      await stop(...held);
      await closeAll(opened);
      throw new GenesisError('agent-netns-slot-failed', `an agent's network namespace could not be prepared ahead: ${messageOf(cause)}`, {
        hint: HINT,
        cause,
      });
    }
  }
}

function fdPath(handle: FileHandle): string {
  return `/proc/${process.pid}/fd/${handle.fd}`;
}

async function closeAll(handles: readonly FileHandle[]): Promise<void> {
  await Promise.all(handles.map((h) => h.close().catch(() => undefined)));
}

/** Resolves when the holder said `up`: its namespaces exist and its hostname is set. */
function holderUp(holder: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => finish(new Error('unshare did not make the namespaces in time')), SLOT_START_MS);
    const onExit = () => finish(new Error(`unshare --net --ipc --uts ended: ${stderrOf(holder)}`));
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('up\n')) finish();
    };
    function finish(error?: Error) {
      clearTimeout(timer);
      holder.off('exit', onExit);
      holder.stdout?.off('data', onData);
      if (error) reject(error);
      else resolve();
    }
    holder.once('exit', onExit);
    holder.stdout?.on('data', onData);
  });
}

/**
 * Opens the holder's namespaces, each checked to be another than this process's own: a holder's
 * /proc/<pid>/ns entries name this host's namespaces until unshare made its own, and this host's
 * network must never be filtered or given to an agent.
 */
async function openNamespaces(holder: ChildProcess, opened: FileHandle[]): Promise<Record<Kind, FileHandle>> {
  const ns = {} as Record<Kind, FileHandle>;
  for (const kind of KINDS) {
    const handle = await open(`/proc/${holder.pid}/ns/${kind}`, 'r');
    opened.push(handle);
    if ((await handle.stat()).ino === (await stat(`/proc/self/ns/${kind}`)).ino) throw new Error(`the holder is still in this host's ${kind} namespace`);
    ns[kind] = handle;
  }
  // Opened while the holder runs (not yet reaped, so its pid cannot have named another process).
  if (!running(holder)) throw new Error(`the namespaces' holder ended: ${stderrOf(holder)}`);
  return ns;
}

/** slirp4netns writes one byte on its ready fd once the namespace's network is up. */
function slirpReady(slirp: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('slirp4netns did not come up in time')), SLOT_START_MS);
    const done = (error?: Error) => {
      clearTimeout(timer);
      slirp.off('exit', onExit);
      if (error) reject(error);
      else resolve();
    };
    const onExit = () => done(new Error(`slirp4netns ended: ${stderrOf(slirp)}`));
    slirp.once('exit', onExit);
    slirp.stdio[3]?.once('data', () => done());
  });
}

/** The same packet filter as at launch (egressRules), restored inside the namespace. */
async function setFilter(tools: Required<NetnsTools>, path: string, blocked: readonly string[]): Promise<void> {
  const restore = await runCommand({
    file: tools.nsenter,
    args: [`--net=${path}`, tools.iptablesRestore],
    env: process.env,
    input: egressRules(undefined, blocked),
  });
  if (restore.exitCode !== 0) throw new Error(`the egress filter could not be set: ${restore.stderr.toString('utf8').trim()}`);
}

/** Kills the processes and waits until each is gone. */
async function stop(...children: ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (!running(child)) return resolve();
          // Its exit is awaited, so it must keep this process alive until then.
          child.ref();
          child.once('exit', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
}

function running(child: ChildProcess): boolean {
  return !ended.has(child) && child.exitCode === null && child.signalCode === null;
}

/** A ready slot must not keep this process alive, nor wait for it to read anything. */
function unrefChild(child: ChildProcess): void {
  child.unref();
  for (const stream of child.stdio) (stream as { unref?: () => void } | null)?.unref?.();
}

const stderrs = new WeakMap<ChildProcess, string>();
const ended = new WeakSet<ChildProcess>();

/** Spawns with its stderr kept (for the message) and its spawn error turned into an exit. */
function started(file: string, args: string[], stdio: Array<'pipe' | 'ignore'>): ChildProcess {
  const child = spawn(file, args, { stdio });
  stderrs.set(child, '');
  child.once('exit', () => ended.add(child));
  child.stderr?.on('data', (chunk: Buffer) => stderrs.set(child, (stderrs.get(child)! + chunk.toString()).slice(-2000)));
  child.on('error', (error) => {
    stderrs.set(child, error.message);
    // A program that cannot be started never exits: say so to whoever waits for its exit.
    if (child.pid === undefined) child.emit('exit', 127, null);
  });
  child.stdin?.on('error', () => undefined);
  return child;
}

function stderrOf(child: ChildProcess): string {
  return (stderrs.get(child) ?? '').trim() || `exit code ${child.exitCode ?? child.signalCode}`;
}

function messageOf(cause: unknown): string {
  return cause instanceof Error ? cause.message : String(cause);
}
