/**
 * What an agent's start costs under bubblewrap (the overhead bench's "agent start" phase), step by
 * step: each step of the launch alone, then a no-op agent (CommandAgent.run, as an episode runs it)
 * with its network namespace made at the launch against one taken from the pool made ahead
 * (src/sandbox/netns/pool.ts), and the same command on the bare host. The steps and the
 * columns take turns run by run, so load from anything else on the machine falls on all alike.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, open, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { egressRules, findEgressTools, findNetnsTools, hostNetworks } from '../src/sandbox/netns/network-namespace.js';
import { AgentNetnsPool } from '../src/sandbox/netns/pool.js';
import { systemDirBinds } from '../src/sandbox/agent/find-binary.js';
import { BwrapAgentSandbox } from '../src/sandbox/agent/bwrap-agent-sandbox.js';
import { agentReadOnlyPaths } from '../src/sandbox/agent/mounts.js';
import { CommandAgent } from '../src/agents/command/command-agent.js';
import { formatTable } from '../src/cli/output.js';
import { prepareWorkDir } from '../src/sandbox/gate/work-dir.js';
import type { BenchContext, BenchResult } from './lib/bench-module.js';
import { NO_OP_AGENT } from './lib/bench-world.js';
import { cell, summarize } from './lib/stats.js';

const execFileAsync = promisify(execFile);

/** Runs a program to its end; resolves with the milliseconds it took. */
function timed(file: string, args: readonly string[], input?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(file, args, { stdio: [input === undefined ? 'ignore' : 'pipe', 'ignore', 'ignore'] });
    child.stdin?.end(input);
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(performance.now() - t0) : reject(new Error(`${file} exited ${code}`))));
  });
}

export async function run(ctx: BenchContext): Promise<BenchResult> {
  if (process.getuid?.() !== 0) {
    return { title: "An agent's start under bubblewrap", table: 'not measured: Genesis is not root here, and the pool and the packet filter are root-only' };
  }
  const rounds = ctx.quick ? 5 : 30;
  const root = await mkdtemp(join(tmpdir(), 'genesis-bench-agent-start-'));
  const pool = new AgentNetnsPool();
  try {
    const tools = { ...(await findNetnsTools()), ...(await findEgressTools()) };
    const bwrapArgs = [
      ...(await systemDirBinds()),
      ...['--proc', '/proc', '--dev', '/dev', '--perms', '1777', '--tmpfs', '/tmp'],
      ...['--unshare-pid', '--unshare-ipc', '--unshare-uts', '--hostname', 'agent', '--die-with-parent', '--new-session'],
    ];
    const drop = ['setpriv', '--reuid=1000', '--regid=1000', '--clear-groups', '--no-new-privs', '--inh-caps=-all', '--bounding-set=-all'];
    const pooled = new BwrapAgentSandbox(undefined, pool);
    const atLaunch = new BwrapAgentSandbox();
    await Promise.all([pooled.check(), atLaunch.check()]);
    const promptFile = join(root, 'prompt.md');
    await writeFile(promptFile, 'no-op\n');
    let made = 0;
    const workspace = async () => {
      const dir = join(root, `ws${made++}`);
      await mkdir(join(dir, 'notes'), { recursive: true });
      await mkdir(join(dir, 'home'));
      return dir;
    };
    const agentRun = async (sandbox: BwrapAgentSandbox) => {
      const dir = await workspace();
      const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', GENESIS_EPISODE_ID: 'e', GENESIS_TASK_ID: 't' };
      const t0 = performance.now();
      const result = await new CommandAgent(NO_OP_AGENT, { sandbox }).run({
        workspace: dir,
        promptFile,
        prompt: 'no-op\n',
        env,
        timeoutMs: 30_000,
        taskId: 't',
        attempt: 1,
      });
      if (result.exitCode !== 0) throw new Error(`the no-op agent failed: ${result.log}`);
      return performance.now() - t0;
    };
    const host = async () => {
      const dir = await workspace();
      const t0 = performance.now();
      await execFileAsync(NO_OP_AGENT[0]!, NO_OP_AGENT.slice(1), { cwd: dir, env: { PATH: process.env.PATH ?? '', GENESIS_TASK_ID: 't' } });
      return performance.now() - t0;
    };
    const ownNet = (await stat('/proc/self/ns/net')).ino;
    /** slirp4netns's start and the filter, as a pool makes them, in a namespace of a fresh `unshare --net`. */
    const network = async (): Promise<[number, number]> => {
      const holder = spawn(tools.unshare, ['--net', '--', '/bin/sh', '-c', 'read _'], { stdio: ['pipe', 'ignore', 'ignore'] });
      let ns = await open(`/proc/${holder.pid}/ns/net`, 'r');
      while ((await ns.stat()).ino === ownNet) {
        await ns.close();
        await new Promise((r) => setTimeout(r, 1));
        ns = await open(`/proc/${holder.pid}/ns/net`, 'r');
      }
      const path = `/proc/${process.pid}/fd/${ns.fd}`;
      const t0 = performance.now();
      const slirp = spawn(
        tools.slirp4netns,
        ['--configure', '--mtu=65520', '--disable-host-loopback', '--ready-fd=3', '--exit-fd=4', '--netns-type=path', path, 'tap0'],
        {
          stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'],
        },
      );
      await new Promise((r) => slirp.stdio[3]!.once('data', r));
      const up = performance.now() - t0;
      const filter = await timed(tools.nsenter, [`--net=${path}`, tools.iptablesRestore], egressRules(undefined, hostNetworks()));
      holder.kill('SIGKILL');
      slirp.kill('SIGKILL');
      await ns.close();
      return [up, filter];
    };

    const steps: Array<[string, () => Promise<number | [number, number]>]> = [
      ['spawn of `sh -c true` from Node (the floor of any step)', () => timed('/bin/sh', ['-c', 'true'])],
      ['setpriv --pdeathsig (the launcher, slirp4netns, the drop)', () => timed(tools.setpriv, ['--pdeathsig', 'KILL', 'true'])],
      ['unshare --net', () => timed(tools.unshare, ['--net', 'true'])],
      ['slirp4netns: start to ready | nsenter + iptables-restore: the filter', network],
      ['nsenter into a namespace (how a pooled agent joins its own)', () => timed(tools.nsenter, ['--net=/proc/self/ns/net', 'true'])],
      ['bwrap with the agent options', () => timed('bwrap', [...bwrapArgs, 'true'])],
      ['bwrap with the agent options, then setpriv to uid 1000', () => timed('bwrap', [...bwrapArgs, '--', ...drop, 'true'])],
      [
        'hand-over of a fresh workspace and HOME to uid 1000',
        async () => {
          const dir = await workspace();
          const t0 = performance.now();
          await Promise.all([prepareWorkDir(dir), prepareWorkDir(join(dir, 'home'))]);
          return performance.now() - t0;
        },
      ],
      [
        'read-only paths (prompt, alternates, PATH, the binary)',
        async () => {
          const dir = await workspace();
          const t0 = performance.now();
          await agentReadOnlyPaths(['sh'], {
            workspace: dir,
            home: join(dir, 'home'),
            env: { PATH: process.env.PATH ?? '' },
            readOnly: [promptFile],
            name: 'x',
          });
          return performance.now() - t0;
        },
      ],
    ];
    const columns: Array<[string, () => Promise<number>]> = [
      ['no-op agent, namespace made at its launch (launcher: unshare, slirp4netns, filter)', () => agentRun(atLaunch)],
      ['no-op agent, namespace taken from the pool (nsenter)', () => agentRun(pooled)],
      ['the same command on the host (execFile, no sandbox)', host],
    ];
    const samples = new Map<string, number[]>();
    const add = (name: string, ms: number) => samples.set(name, [...(samples.get(name) ?? []), ms]);
    await pool.fill(hostNetworks());
    for (let round = 0; round < rounds + 1; round++) {
      const keep = round > 0; // the first round warms caches
      for (const [name, step] of steps) {
        const got = await step();
        if (!keep) continue;
        if (Array.isArray(got)) {
          const [first, second] = name.split(' | ');
          add(first!, got[0]);
          add(second!, got[1]);
        } else add(name, got);
      }
      for (let k = 0; k < columns.length; k++) {
        const [name, measure] = columns[(round + k) % columns.length]!;
        const ms = await measure();
        if (keep) add(name, ms);
        // What an episode leaves between its agent's end and the next start: the pool refills meanwhile.
        await pool.fill(hostNetworks());
      }
    }
    const rows = [...samples].map(([name, values]) => [name, cell(summarize(values))]);
    return {
      title: `An agent's start under bubblewrap, step by step, ms: median (p90, min–max) of ${rounds} runs each`,
      table: formatTable(['step, or whole start', 'ms'], rows),
      notes: [
        'Steps run alone, each started from this process. An agent started at launch runs the launcher of src/sandbox/netns/network-namespace.ts: setpriv, sh, mkfifo, unshare --net, slirp4netns (through setpriv) until ready, nsenter + iptables-restore, then bwrap and setpriv; one from the pool joins a namespace made ahead (slirp4netns up, the filter set, its own IPC and UTS namespaces) through nsenter, then bwrap and setpriv.',
        `The no-op agent is the overhead bench's (${NO_OP_AGENT.join(' ')}), run by CommandAgent as an episode runs it: hand-over, read-only paths, the launch, the run, the clean-up. Pool: ${JSON.stringify(pool.stats)}.`,
      ],
    };
  } finally {
    await pool.drain();
    await rm(root, { recursive: true, force: true });
  }
}
