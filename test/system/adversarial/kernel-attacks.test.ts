import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import Docker from 'dockerode';
import { afterAll, describe, expect } from 'vitest';
import { CommandAgent } from '../../../src/agents/command/command-agent.js';
import { installWithBwrap } from '../../../src/deps/installers/bwrap.js';
import { installWithDocker } from '../../../src/deps/installers/docker.js';
import { createAgentSandbox } from '../../../src/sandbox/create-agent-sandbox.js';
import { createSandbox } from '../../../src/sandbox/create-sandbox.js';
import { WarmPool } from '../../../src/sandbox/index.js';
import type { SandboxRunResult, SandboxRunSpec } from '../../../src/sandbox/index.js';
import type { AgentSandbox } from '../../../src/sandbox/agent-sandbox.js';
import { logFacts } from '../../helpers/log-facts.js';
import { itWith } from '../../helpers/services.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { specFor } from '../../integration/sandbox/sandbox-contract.js';
import { warmOnly } from '../../integration/sandbox/warm-only.js';

/**
 * Kernel state shared between sandboxes: a gate or an install that stores a note in a kernel
 * keyring (add_key), so that the next sandbox of the same user namespace reads it from
 * /proc/keys or request_key. Bubblewrap sandboxes run with a seccomp filter that refuses the
 * keyring calls (and the rest Docker's default profile refuses): the store fails, the read finds
 * nothing.
 */
const KEY = 'genesis-leak-7c1e';
const STORE = `import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
# add_key("user", KEY, payload, len, KEY_SPEC_USER_KEYRING) and request_key("user", KEY, NULL, 0)
r = libc.syscall(248, b"user", b"${KEY}", b"hidden test text", 16, ctypes.c_long(-4))
print("add_key", r, ctypes.get_errno())
r = libc.syscall(249, b"user", b"${KEY}", None, 0)
print("request_key", r, ctypes.get_errno())
r = libc.syscall(272, 0x10000000)
print("unshare", r, ctypes.get_errno())
`;
const limits = { cpus: 1, memoryMb: 256, pids: 64 };

describe('a key stored in a kernel keyring by one sandbox', () => {
  itWith('bwrap')('is refused in a bwrap gate and a bwrap install, and the next gate finds none', async () => {
    const sandbox = await createSandbox('bwrap', { image: 'genesis/node:20' });
    const first = await tempDir('genesis-keys-');
    await writeFile(join(first, 'store.py'), STORE);
    const gate = await sandbox.run({ command: 'python3 store.py', workDir: first, timeoutMs: 60_000, limits });
    expect(gate.output).toContain('add_key -1 1');
    expect(gate.output).toContain('request_key -1 1');
    expect(gate.output).toContain('unshare -1 1');
    const install = await tempDir('genesis-keys-install-');
    await writeFile(join(install, 'store.py'), STORE);
    const installed = await installWithBwrap({ workDir: install, command: 'python3 store.py', timeoutMs: 60_000, memoryMb: 256, image: 'genesis/node:20' });
    expect(installed.output).toContain('add_key -1 1');
    const next = await tempDir('genesis-keys-next-');
    await writeFile(join(next, 'store.py'), STORE.replace('r = libc.syscall(248', 'r = 0 and libc.syscall(248'));
    const reader = await sandbox.run({ command: 'cat /proc/keys 2>&1; python3 store.py', workDir: next, timeoutMs: 60_000, limits });
    expect(reader.output).not.toContain(KEY);
    expect(reader.output).toContain('request_key -1 1');
    // An ordinary program still runs under the filter.
    expect((await sandbox.run({ command: 'node -e "console.log(6*7)"', workDir: next, timeoutMs: 60_000, limits })).output).toContain('42');
  });
});

/**
 * What a sandboxed process could make of the kernel beyond the keyrings: a user namespace of its
 * own (clone with CLONE_NEWUSER, or clone3 whose flags a filter cannot read), io_uring (a kernel
 * interface Docker's default profile refuses), a personality without address randomisation.
 */
const KERNEL = `use POSIX ();
sub call {
  my ($name, $nr, @args) = @_;
  my $r = syscall($nr, @args);
  my $e = $! + 0;
  POSIX::_exit(0) if $r == 0 && $name =~ /^clone/;
  waitpid($r, 0) if $r > 0 && $name =~ /^clone/;
  print "$name=", ($r >= 0 ? "ok" : $e), "\\n";
}
# clone(CLONE_NEWUSER|SIGCHLD), and with CLONE_NEWNET or CLONE_NEWNS; clone3 with no arguments
call("clone-newuser", 56, 0x10000000 | 17, 0, 0, 0, 0);
call("clone-newnet", 56, 0x40000000 | 17, 0, 0, 0, 0);
call("clone-newns", 56, 0x00020000 | 17, 0, 0, 0, 0);
call("clone-three", 435, 0, 0);
my $params = "\\0" x 120;
call("io-uring", 425, 8, $params);
call("personality", 135, 0x0040000);
call("add-key", 248, "user", "genesis-leak-agent", "note", 4, -4);
my $pid = fork();
POSIX::_exit(0) if $pid == 0;
waitpid($pid, 0);
print "fork=ok\\n";
`;

describe('a sandboxed process that asks the kernel for namespaces or interfaces of its own', () => {
  const refused = {
    'clone-newuser': '1',
    'clone-newnet': '1',
    'clone-newns': '1',
    'clone-three': '38',
    'io-uring': '1',
    personality: '1',
    'add-key': '1',
    fork: 'ok',
  };

  itWith('bwrap')('is refused in a bwrap gate, as Docker refuses it, while plain forks and threads still work', async () => {
    const sandbox = await createSandbox('bwrap', { image: 'genesis/node:20' });
    const dir = await tempDir('genesis-kernel-');
    await writeFile(join(dir, 'kernel.pl'), KERNEL);
    const thread = `node -e "new (require('worker_threads').Worker)('1', { eval: true }).on('exit', () => console.log('thread=ok'))"`;
    const gate = await sandbox.run({ command: `perl kernel.pl; ${thread}`, workDir: dir, timeoutMs: 60_000, limits });
    expect(logFacts(gate.output)).toMatchObject({ ...refused, thread: 'ok' });
  });

  itWith('docker')('is refused in a docker gate', async () => {
    const sandbox = await createSandbox('docker', { image: 'genesis/node:20' });
    const dir = await tempDir('genesis-kernel-docker-');
    await writeFile(join(dir, 'kernel.pl'), KERNEL);
    const gate = await sandbox.run({ command: 'perl kernel.pl', workDir: dir, timeoutMs: 60_000, limits });
    // io_uring left out: Docker 20.10's profile still allows it (later ones refuse it).
    const { 'io-uring': _allowed, ...byDocker } = refused;
    expect(logFacts(gate.output), gate.output).toMatchObject(byDocker);
  });

  itWith('bwrap')('is refused to a bwrap agent, no key one agent stores is seen by the next, and agents at once share no uid', async () => {
    const sandbox = await createAgentSandbox({ kind: 'bwrap', image: 'genesis/node:20', network: 'genesis-agents' });
    const runAgent = (script: string) => runAgentIn(sandbox, script);
    const first = await runAgent('perl kernel.pl');
    expect(logFacts(first), first).toMatchObject(refused);
    const next = await runAgent('echo keys=$(grep -c genesis-leak /proc/keys)');
    expect(logFacts(next).keys).toBe('0');
    if (process.getuid?.() !== 0) return;
    // Two agents at once have uids of their own, each a user their tools can look up.
    const both = await Promise.all([runAgent(WHOAMI), runAgent(WHOAMI)]);
    const [a, b] = both.map((log) => logFacts(log));
    expect(a, both[0]).toMatchObject({ user: 'agent', info: 'agent' });
    expect(Number(a!.uid)).toBeGreaterThanOrEqual(100_000);
    expect(b!.uid).not.toBe(a!.uid);
  });
});

/** What an agent's uid and user are, and a second so that two agents surely overlap. */
const WHOAMI = `echo uid=$(id -u); echo user=$(id -un); node -e "console.log('info=' + require('os').userInfo().username)"; sleep 1`;

/** Runs `script` as a command agent in `sandbox`, in a workspace of its own holding kernel.pl; resolves with its log. */
async function runAgentIn(sandbox: AgentSandbox, script: string): Promise<string> {
  const root = await tempDir('genesis-kernel-agent-');
  const workspace = join(root, 'ws');
  await mkdir(join(root, 'home'), { recursive: true });
  await mkdir(workspace);
  await writeFile(join(workspace, 'kernel.pl'), KERNEL);
  const promptFile = join(root, 'prompt.md');
  await writeFile(promptFile, 'probe\n');
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: join(root, 'home') };
  const result = await new CommandAgent(['sh', '-c', script], { sandbox }).run({
    workspace,
    promptFile,
    prompt: 'probe\n',
    env,
    timeoutMs: 60_000,
    taskId: 't',
    attempt: 1,
  });
  return `${result.log}`;
}

describe('docker agents running at the same time', () => {
  itWith('docker')('share no uid, each a user their tools can look up', async () => {
    if (process.getuid?.() !== 0) return;
    const sandbox = await createAgentSandbox({ kind: 'docker', image: 'genesis/node:20', network: 'genesis-agents' });
    const both = await Promise.all([runAgentIn(sandbox, WHOAMI), runAgentIn(sandbox, WHOAMI)]);
    const [a, b] = both.map((log) => logFacts(log));
    expect(a, both[0]).toMatchObject({ user: 'agent', info: 'agent' });
    expect(Number(a!.uid)).toBeGreaterThanOrEqual(100_000);
    expect(b!.uid, both[1]).not.toBe(a!.uid);
  });
});

/** The uid the bwrap gate used to give a work dir: a hash anybody can compute, into 60,000 values. */
function hashedUid(workDir: string): number {
  let hash = 2166136261;
  for (const char of resolve(workDir)) hash = Math.imul(hash ^ char.charCodeAt(0), 16777619) >>> 0;
  return 100000 + (hash % 60000);
}

/** Two work dirs under `root` whose hashed uids are the same: a collision that once shared one user between two gates. */
function collidingDirs(root: string): [string, string] {
  const seen = new Map<number, string>();
  for (let i = 0; ; i++) {
    const dir = join(root, `g${i}`);
    const uid = hashedUid(dir);
    const other = seen.get(uid);
    if (other) return [other, dir];
    seen.set(uid, dir);
  }
}

describe('two bwrap gates running at the same time', () => {
  itWith('bwrap')('never share a uid, so one cannot use up the processes of the other, whatever their work dirs are named', async () => {
    if (process.getuid?.() !== 0) return; // as another user every sandbox runs as that user: no uid to give out
    const sandbox = await createSandbox('bwrap', { image: 'genesis/node:20' });
    const [a, b] = collidingDirs(await tempDir('genesis-uids-'));
    await mkdir(a);
    await mkdir(b);
    const few = { cpus: 1, memoryMb: 256, pids: 40 };
    // The first holds nearly every process its user may have while the second starts and forks.
    const holder = sandbox.run({ command: 'echo uid=$(id -u); for i in $(seq 36); do sleep 6 & done; wait', workDir: a, timeoutMs: 60_000, limits: few });
    await new Promise((r) => setTimeout(r, 2_000));
    const forker = await sandbox.run({
      command: 'echo uid=$(id -u); n=0; for i in $(seq 20); do sleep 0.5 & n=$((n+1)); done; wait; echo forked=$n',
      workDir: b,
      timeoutMs: 60_000,
      limits: few,
    });
    const held = await holder;
    expect(logFacts(forker.output).forked, forker.output).toBe('20');
    expect(logFacts(forker.output).uid).not.toBe(logFacts(held.output).uid);
  });
});

describe('a gate served by a reused docker container', () => {
  const pool = new WarmPool({ perKey: 1 });
  afterAll(() => pool.drain());

  itWith('docker')('finds no socket state or counter the gate before it left in the network namespace', async () => {
    const sandbox = warmOnly(pool);
    // The first listens on a port, connects to it and closes the client side first: a TIME_WAIT the kernel keeps a minute.
    const leave = await specFor(
      `node -e "const n=require('net');const s=n.createServer(c=>c.on('end',()=>c.end())).listen(4321,'127.0.0.1',()=>{const c=n.connect(4321,'127.0.0.1',()=>c.end());c.on('close',()=>{s.close();console.log('left=1')})})"`,
      { limits },
    );
    expect((await sandbox.run(leave)).output).toContain('left=1');
    const probe = await specFor(
      [
        'echo tcp=$(tail -n +2 /proc/net/tcp | wc -l)',
        "echo opens=$(awk '/^Tcp: [0-9]/ {print $6}' /proc/net/snmp)",
        "echo lo=$(awk '/lo:/ {print $2}' /proc/net/dev)",
      ].join('\n'),
      { limits },
    );
    const seen = logFacts((await sandbox.run(probe)).output);
    expect(seen).toMatchObject({ tcp: '0', opens: '0', lo: '0' });
  });
});

/**
 * Per-user kernel limits between docker sandboxes: the kernel counts RLIMIT_NPROC (and inotify
 * instances, keyrings, locked memory) per uid across the whole host, whatever container or
 * namespace a process is in. A holder keeps 30 processes of its uid alive; the forker lowers its
 * own RLIMIT_NPROC to 28 and starts 20: that works only when no live sandbox shares its uid. The
 * holder runs until the test writes `done` into its work dir (its sleeps die with its sandbox).
 */
const HOLD = 'echo uid=$(id -u); for i in $(seq 30); do sleep 600 & done; : > ready; while [ ! -e done ]; do sleep 0.2; done';
// prlimit, not `ulimit -u`: the image's dash has no -u.
const FORK = [
  'echo uid=$(id -u); echo cgroup=$(tail -1 /proc/self/cgroup)',
  `prlimit --nproc=28 sh -c 'n=0; for i in $(seq 20); do sleep 0.5 & n=$((n+1)); done; wait; echo forked=$n'`,
].join('\n');
const held = { cpus: 1, memoryMb: 256, pids: 64 };

/** Starts the holder in `workDir` once its processes run (its `ready` file); `stop` ends it and resolves with its run. */
async function startHolder(sandbox: { run: (spec: SandboxRunSpec) => Promise<SandboxRunResult> }, workDir: string) {
  const run = sandbox.run({ command: HOLD, workDir, timeoutMs: 180_000, limits: held });
  run.catch(() => undefined);
  const stop = async () => {
    await writeFile(join(workDir, 'done'), '');
    return run;
  };
  for (let i = 0; i < 1_200 && !existsSync(join(workDir, 'ready')); i++) await new Promise((r) => setTimeout(r, 50));
  if (!existsSync(join(workDir, 'ready'))) await stop();
  expect(existsSync(join(workDir, 'ready')), 'the holder started its processes').toBe(true);
  return { stop };
}

describe('docker gates at the same time, or one after another in a reused container', () => {
  itWith('docker')('never share a uid with each other or a docker install, so one cannot use up the processes of another', async () => {
    if (process.getuid?.() !== 0) return; // as another user every sandbox runs as that user: no uid to give out
    const sandbox = await createSandbox('docker', { image: 'genesis/node:20' });
    const holdDir = await tempDir('genesis-uids-docker-');
    const holder = await startHolder(sandbox, holdDir);
    const [forker, install] = await Promise.all([
      sandbox.run({ command: FORK, workDir: await tempDir('genesis-uids-docker-'), timeoutMs: 60_000, limits: held }),
      installWithDocker(
        { workDir: await tempDir('genesis-uids-install-'), command: FORK, timeoutMs: 60_000, memoryMb: 256, image: 'genesis/node:20' },
        new Docker(),
      ),
    ]).finally(() => holder.stop());
    const holding = logFacts((await holder.stop()).output);
    const [gate, installed] = [logFacts(forker.output), logFacts(install.output)];
    expect(gate.forked, forker.output).toBe('20');
    expect(installed.forked, install.output).toBe('20');
    expect(Number(holding.uid)).toBeGreaterThanOrEqual(100_000);
    expect(new Set([holding.uid, gate.uid, installed.uid]).size, JSON.stringify({ holding, gate, installed })).toBe(3);
  });

  itWith('docker')('run each gate of a reused container as a uid of its own, none a live bwrap gate holds', async () => {
    if (process.getuid?.() !== 0) return;
    const pool = new WarmPool({ perKey: 1 });
    try {
      const docker = warmOnly(pool);
      const first = await specFor(FORK, { limits: held, timeoutMs: 60_000 });
      const one = logFacts((await docker.run(first)).output);
      // A bwrap gate in the first gate's work dir (its tree now that uid's) while the container serves the next gate.
      const bwrap = await createSandbox('bwrap', { image: 'genesis/node:20' });
      const holder = await startHolder(bwrap, first.workDir);
      const two = logFacts((await docker.run(await specFor(FORK, { limits: held, timeoutMs: 60_000 })).finally(() => holder.stop())).output);
      const holding = logFacts((await holder.stop()).output);
      expect(pool.stats.reused, 'the second gate was served by the container of the first').toBe(1);
      expect(two.cgroup).toBe(one.cgroup);
      expect(one.forked).toBe('20');
      expect(two.forked, JSON.stringify(two)).toBe('20');
      expect(Number(one.uid)).toBeGreaterThanOrEqual(100_000);
      // The bwrap gate took the uid its work dir was handed to (the first gate's, free again): the next gate has another.
      expect(two.uid, JSON.stringify({ one, two, holding })).not.toBe(one.uid);
      expect(two.uid).not.toBe(holding.uid);
    } finally {
      await pool.drain();
    }
  });
});
