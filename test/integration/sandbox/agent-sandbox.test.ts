import { execFileSync, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readlinkSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { homedir, hostname } from 'node:os';
import { dirname, join, relative, sep } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import type { AgentRunInput } from '../../../src/agents/agent.js';
import { createAgentSandbox } from '../../../src/sandbox/create-agent-sandbox.js';
import { DockerAgentSandbox } from '../../../src/sandbox/agent/docker/docker-agent-sandbox.js';
import { CommandAgent } from '../../../src/agents/command/command-agent.js';
import { OpenAIAgent } from '../../../src/agents/openai/openai-agent.js';
import { BwrapSandbox } from '../../../src/sandbox/gate/bwrap/bwrap-sandbox.js';
import { DockerSandbox } from '../../../src/sandbox/gate/docker/docker-sandbox.js';
import { startOutsideServer } from '../../helpers/outside-server.js';
import { agentEndpoints } from '../../../src/sandbox/egress/endpoints.js';
import { ensureAgentNetwork } from '../../../src/sandbox/agent/docker/network.js';
import { itWith } from '../../helpers/services.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { loadRecording, startReplayServer } from '../agents/replay-server.js';
import { hostAddresses } from '../../helpers/host-addresses.js';
import { logFacts } from '../../helpers/log-facts.js';

/**
 * What an agent sees from inside its sandbox, one `name=value` line per fact. MODEL_URL is a
 * server standing in for the model endpoint; HOST_LOOPBACK_URL the same server on the host's
 * loopback (where Redis and the dashboard listen).
 */
const PROBE = [
  'echo "uid=$(id -u)"',
  'test -e /var/run/docker.sock && echo docker-socket=visible || echo docker-socket=hidden',
  'echo "home-entries=$(ls -A "$HOST_HOME" 2>/dev/null | tr "\\n" " ")"',
  'test -e "$PROBE_LEDGER" && echo world-refs=visible || echo world-refs=hidden',
  'test -e "$PROBE_GATE" && echo gate-dir=visible || echo gate-dir=hidden',
  'echo "leak=${GENESIS_TEST_LEAK:-none}"',
  'echo "git=$(git log --format=%s -1 2>&1)"',
  'echo change > made-by-agent.txt && echo workspace=writable',
  'touch "$HOME/x" 2>/dev/null && echo home=writable || echo home=readonly',
  'touch /usr/genesis-probe 2>/dev/null && echo usr=writable || echo usr=readonly',
  'echo "ca=${NODE_EXTRA_CA_CERTS:-none}"; test -s "$NODE_EXTRA_CA_CERTS" && echo ca-file=present || echo ca-file=missing',
  `node -e "fetch(process.env.MODEL_URL).then(r=>r.text()).then(t=>console.log('model='+t),e=>console.log('model=unreachable'))"`,
  `node -e "fetch(process.env.HOST_LOOPBACK_URL).then(r=>r.text()).then(t=>console.log('host-loopback='+t),e=>console.log('host-loopback=unreachable'))"`,
  `node -e "fetch(process.env.HOST_ADDRESS_URL).then(r=>r.text()).then(t=>console.log('host-address='+t),e=>console.log('host-address=unreachable'))"`,
  // Redis's port on every address of this host, loopback first, and on the namespace's gateway.
  `node -e "${"const net=require('net');for(const a of process.env.HOST_ADDRS.split(',')){const s=net.connect(6379,a);s.setTimeout(3000,()=>{console.log('redis@'+a+'=timeout');s.destroy()});s.on('connect',()=>{console.log('redis@'+a+'=connected');s.destroy()});s.on('error',e=>console.log('redis@'+a+'='+e.code))}"}"`,
].join('; ');

let model: Server;
let port: number;
beforeAll(async () => {
  model = createServer((_req, res) => res.end('answers'));
  await new Promise<void>((resolve) => model.listen(0, '0.0.0.0', resolve));
  port = (model.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => model.close(() => resolve())));

/** A world-like layout: a bare repo, a shared-clone workspace, a gate work dir beside them. */
async function layout(modelHost: string, modelPort = port): Promise<{ run: AgentRunInput; gateDir: string }> {
  const root = await tempDir('genesis-agent-sandbox-');
  const world = join(root, 'w.world');
  const source = join(root, 'source');
  await mkdir(source);
  execFileSync('git', ['init', '--quiet', source]);
  await writeFile(join(source, 'README.md'), 'hello\n');
  execFileSync('git', ['-C', source, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '--quiet', '-m', 'first commit', '--allow-empty']);
  execFileSync('git', ['clone', '--quiet', '--bare', source, world]);
  const episodeDir = join(world, 'genesis', 'episodes', 'e1');
  const gateDir = join(world, 'genesis', 'gates', 'e1');
  await mkdir(gateDir, { recursive: true });
  await mkdir(join(episodeDir, 'home'), { recursive: true });
  const workspace = join(episodeDir, 'ws');
  execFileSync('git', ['clone', '--quiet', '--shared', world, workspace]);
  const promptFile = join(episodeDir, 'prompt.md');
  await writeFile(promptFile, 'probe\n');
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    GENESIS_EPISODE_ID: 'e1',
    PROBE_LEDGER: join(world, 'refs'),
    PROBE_GATE: gateDir,
    MODEL_URL: `http://${modelHost}:${modelPort}/`,
    HOST_LOOPBACK_URL: `http://127.0.0.1:${port}/`,
    HOME: join(episodeDir, 'home'),
    HOST_HOME: homedir(),
    HOST_ADDRS: hostAddresses().join(','),
    // The same server on this host's first non-loopback address (it listens on 0.0.0.0).
    HOST_ADDRESS_URL: `http://${hostAddresses()[1] ?? '127.0.0.1'}:${port}/`,
  };
  // The object store the workspace borrows, as an episode passes it (from the world, not from the workspace's alternates).
  const readOnly = [join(world, 'objects')];
  return { run: { workspace, promptFile, prompt: 'probe\n', env, readOnly, timeoutMs: 60_000, taskId: 't', attempt: 1 }, gateDir };
}

/**
 * What of the host's home the agent may see: only the way to PATH directories there (a
 * version manager's bin, ~/.cargo/bin), never the rest of it.
 */
function expectHomeHidden(entries: string | undefined): void {
  expect(entries, 'the probe listed the host home').toBeDefined();
  const onPath = new Set(
    (process.env.PATH ?? '')
      .split(':')
      .filter((d) => d.startsWith(homedir() + sep))
      .map((d) => relative(homedir(), d).split(sep)[0]),
  );
  for (const entry of (entries ?? '').split(' ').filter(Boolean)) expect(onPath, `~/${entry} is visible`).toContain(entry);
}

async function probe(kind: 'docker' | 'bwrap', modelHost: string, modelPort = port) {
  const sandbox = await createAgentSandbox({ kind, image: 'genesis/node:20', network: 'genesis-agents' });
  const { run } = await layout(modelHost, modelPort);
  process.env.GENESIS_TEST_LEAK = 'orchestrator-secret';
  try {
    const result = await new CommandAgent(['sh', '-c', PROBE], { sandbox }).run(run);
    return { result, seen: logFacts(result.log), run };
  } finally {
    delete process.env.GENESIS_TEST_LEAK;
  }
}

/** The gateway address of the agents' network: how a container reaches a server on this host. */
function agentsGateway(): string {
  return execFileSync('docker', ['network', 'inspect', 'genesis-agents', '--format', '{{(index .IPAM.Config 0).Gateway}}'], { encoding: 'utf8' }).trim();
}

/** An episode id of its own, so a test sees only the containers of its own launches. */
function uniqueEpisode(): string {
  return `flake-${randomUUID().slice(0, 8)}`;
}

function agentContainers(episode: string): string[] {
  return execFileSync(
    'docker',
    ['ps', '-a', '--filter', 'label=genesis.sandbox=agent', '--filter', `name=genesis-agent-${episode}-`, '--format', '{{.Names}} {{.State}}'],
    { encoding: 'utf8' },
  )
    .split('\n')
    .filter(Boolean);
}

/**
 * Every container of the episode seen during `ms` after the run returned. The daemon may finish
 * a create or a start it was asked for just before the kill, later than the run's cleanup: a
 * container that shows up late has outlived the agent as much as one that never went.
 */
async function containersAppearing(episode: string, ms = 3_000): Promise<string[]> {
  const seen = new Set<string>();
  const until = Date.now() + ms;
  do {
    for (const c of agentContainers(episode)) seen.add(c);
    await new Promise((resolve) => setTimeout(resolve, 200));
  } while (Date.now() < until);
  for (const c of agentContainers(episode)) seen.add(c);
  return [...seen];
}

/** Resolves once the process that runs the episode's container is spawned (it names the container). */
async function waitForLauncher(episode: string): Promise<void> {
  const mark = `genesis-agent-${episode}-`;
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; ) {
    for (const pid of await readdir('/proc').catch(() => [])) {
      if (!/^[0-9]+$/.test(pid)) continue;
      const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
      // The launcher, not the `docker create` that may come before it.
      if (cmdline.includes(mark) && !cmdline.split('\0').includes('create')) return;
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`no launcher of ${mark} started within 30 s`);
}

describe('an agent sandboxed with docker', () => {
  itWith('docker')('sees only its workspace, its HOME and the system, with only the variables it is given', async () => {
    await createAgentSandbox({ kind: 'docker', image: 'genesis/node:20', network: 'genesis-agents' });
    const { result, seen, run } = await probe('docker', agentsGateway());
    expect(result.exitCode).toBe(0);
    expect(seen).toMatchObject({
      'docker-socket': 'hidden',
      'world-refs': 'hidden',
      'gate-dir': 'hidden',
      leak: 'none',
      git: 'first commit',
      workspace: 'writable',
      home: 'writable',
      usr: 'readonly',
      // The image's CA bundle (its genesis.ca-bundle label; the gate image sets no CA variable): the model may sit behind this machine's CAs.
      ca: '/etc/ssl/certs/ca-certificates.crt',
      'ca-file': 'present',
    });
    expectHomeHidden(seen['home-entries']);
    // As root the agent runs as a uid leased for its launch, not the image's 1000 another sandbox could share.
    if (process.getuid?.() === 0) expect(Number(seen.uid)).toBeGreaterThanOrEqual(100_000);
    expect(await readFile(join(run.workspace, 'made-by-agent.txt'), 'utf8')).toBe('change\n');
  });

  itWith('docker')("reaches its model through its own network, and not this host's loopback services", async () => {
    await createAgentSandbox({ kind: 'docker', image: 'genesis/node:20', network: 'genesis-agents' });
    const { seen } = await probe('docker', agentsGateway());
    expect(seen.model).toBe('answers');
    expect(seen['host-loopback']).toBe('unreachable');
  });

  itWith('docker')('leaves no container behind when the agent is killed at its timeout', async () => {
    const sandbox = await createAgentSandbox({ kind: 'docker', image: 'genesis/node:20', network: 'genesis-agents' });
    const { run } = await layout('127.0.0.1');
    const episode = uniqueEpisode();
    const result = await new CommandAgent(['sleep', '60'], { sandbox }).run({ ...run, env: { ...run.env, GENESIS_EPISODE_ID: episode }, timeoutMs: 1_500 });
    expect(result.timedOut).toBe(true);
    expect(await containersAppearing(episode)).toEqual([]);
  });

  itWith('docker')('fails with agent-not-found when the program is not in the image', async () => {
    const sandbox = await createAgentSandbox({ kind: 'docker', image: 'genesis/node:20', network: 'genesis-agents' });
    const { run } = await layout('127.0.0.1');
    const error = await new CommandAgent(['genesis-no-such-agent'], { sandbox }).run(run).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'agent-not-found', retryable: false });
  });

  itWith('docker')("cannot reach the gate: the gate's container has no network interface but loopback", async () => {
    const dir = await tempDir('genesis-gate-net-');
    const gate = await new DockerSandbox({ image: 'genesis/node:20' }).run({
      command: 'cat /proc/net/dev',
      workDir: dir,
      timeoutMs: 30_000,
      limits: { cpus: 1, memoryMb: 256, pids: 64 },
    });
    const interfaces = gate.output
      .split('\n')
      .slice(2)
      .map((l) => l.trim().split(':')[0])
      .filter(Boolean);
    expect(interfaces).toEqual(['lo']);
  });
});

describe('when a docker-sandboxed agent is killed or aborted at any moment', () => {
  // 0 ms: the kill lands right after the spawn, before the daemon could have made the container;
  // the others land while it is being made, started, or while the agent runs.
  for (const ms of [0, 30, 100, 300, 1_000, 2_500]) {
    itWith('docker')(`leaves no container behind when the timeout falls ${ms} ms after the start`, async () => {
      const sandbox = await createAgentSandbox({ kind: 'docker', image: 'genesis/node:20', network: 'genesis-agents' });
      const { run } = await layout('127.0.0.1');
      const episode = uniqueEpisode();
      const result = await new CommandAgent(['sleep', '60'], { sandbox }).run({ ...run, env: { ...run.env, GENESIS_EPISODE_ID: episode }, timeoutMs: ms });
      expect(result.timedOut).toBe(true);
      expect(result.exitCode).not.toBe(0);
      expect(await containersAppearing(episode)).toEqual([]);
    });
  }

  itWith('docker')('gives the agent its grace at the timeout: it gets the TERM, and its exit code is its own', async () => {
    const sandbox = await createAgentSandbox({ kind: 'docker', image: 'genesis/node:20', network: 'genesis-agents' });
    const { run } = await layout('127.0.0.1');
    const episode = uniqueEpisode();
    const agent = new CommandAgent(['sh', '-c', 'trap "echo stopped > stopped.txt; exit 3" TERM; echo ready; while :; do sleep 0.1; done'], { sandbox });
    const result = await agent.run({ ...run, env: { ...run.env, GENESIS_EPISODE_ID: episode }, timeoutMs: 1_500 });
    expect(result).toMatchObject({ timedOut: true, exitCode: 3 });
    expect(result.log).toContain('ready');
    expect(await readFile(join(run.workspace, 'stopped.txt'), 'utf8')).toBe('stopped\n');
    expect(await containersAppearing(episode, 1_000)).toEqual([]);
  });

  for (const ms of [0, 100, 1_000]) {
    itWith('docker')(`leaves no container behind when the episode is aborted ${ms} ms after the launcher started`, async () => {
      const sandbox = await createAgentSandbox({ kind: 'docker', image: 'genesis/node:20', network: 'genesis-agents' });
      const { run } = await layout('127.0.0.1');
      const episode = uniqueEpisode();
      const controller = new AbortController();
      const running = new CommandAgent(['sleep', '60'], { sandbox }).run({
        ...run,
        env: { ...run.env, GENESIS_EPISODE_ID: episode },
        timeoutMs: 30_000,
        signal: controller.signal,
      });
      // Aborted once the launcher is spawned (CommandAgent listens for the abort from then on).
      await waitForLauncher(episode);
      setTimeout(() => controller.abort(), ms);
      const result = await running;
      expect(result.aborted).toBe(true);
      expect(await containersAppearing(episode)).toEqual([]);
    });
  }
});

/** A launch of `argv` in the docker agent sandbox for a fresh episode, and the episode's name. */
async function launchOf(sandbox: DockerAgentSandbox, argv: string[]) {
  const { run } = await layout('127.0.0.1');
  const name = `${uniqueEpisode()}-x`;
  const launch = await sandbox.launch(argv, {
    workspace: run.workspace,
    home: join(dirname(run.promptFile), 'home'),
    env: run.env,
    readOnly: [run.promptFile],
    name,
  });
  return { launch, name };
}

describe("a docker-sandboxed agent's exit", () => {
  /** Runs `argv` through a launch of the docker agent sandbox, as CommandAgent spawns it. */
  async function launched(sandbox: DockerAgentSandbox, argv: string[], input = '') {
    const { launch, name } = await launchOf(sandbox, argv);
    try {
      const result = await execa(launch.file, launch.args, { env: launch.env, extendEnv: false, reject: false, input });
      return { ...result, name: `genesis-agent-${name}` };
    } finally {
      await launch.dispose();
    }
  }

  /** What plain `docker run` exits with for the same program, in the same image. */
  function dockerRunExit(image: string, argv: string[], options: string[] = []): number {
    try {
      execFileSync('docker', ['run', '--rm', '-i', '-v', '/usr:/usr:ro', ...options, image, ...argv], { stdio: ['ignore', 'ignore', 'ignore'] });
      return 0;
    } catch (error) {
      return (error as { status: number }).status;
    }
  }

  const cases: Array<[string, string[], number]> = [
    ['a normal exit', ['sh', '-c', 'exit 0'], 0],
    ['an exit with 1 (what docker start says for its own failures)', ['sh', '-c', 'exit 1'], 1],
    ['an exit with N', ['sh', '-c', 'exit 7'], 7],
    ['a program not in the image', ['genesis-no-such-agent'], 127],
    ['a program that is not executable', ['/etc/passwd'], 126],
    ['a directory as the program', ['/usr'], 126],
  ];
  for (const [what, argv, code] of cases) {
    itWith('docker')(`reads ${what} as docker run does (${code})`, async () => {
      const sandbox = new DockerAgentSandbox({ image: 'genesis/node:20', network: 'genesis-agents' });
      const result = await launched(sandbox, argv);
      expect(result.exitCode).toBe(code);
      expect(dockerRunExit('genesis/node:20', argv)).toBe(code);
    });
  }

  /**
   * Docker itself failing after the sandbox was checked: at the create (an image gone, a daemon
   * that stopped answering) or at the start (a network gone: the daemon checks it only then).
   * Each gives `dockerRun` docker run's own arguments for the same failure.
   */
  const dockerFailures: Array<{
    what: string;
    code: string;
    retryable: boolean;
    arrange: () => Promise<{ sandbox: DockerAgentSandbox; dockerRun: string[]; restore: () => void }>;
  }> = [
    {
      what: 'an image removed after the check',
      code: 'agent-sandbox-invalid',
      retryable: false,
      arrange: async () => {
        const image = `genesis-test/agent-gone:${randomUUID().slice(0, 8)}`;
        execFileSync('docker', ['tag', 'genesis/node:20', image]);
        const sandbox = new DockerAgentSandbox({ image, network: 'genesis-agents' });
        await sandbox.check();
        execFileSync('docker', ['rmi', image], { stdio: 'ignore' });
        return { sandbox, dockerRun: [image], restore: () => undefined };
      },
    },
    {
      what: 'a network removed after the check',
      code: 'agent-sandbox-invalid',
      retryable: false,
      arrange: async () => {
        const network = `genesis-test-gone-${randomUUID().slice(0, 8)}`;
        const sandbox = new DockerAgentSandbox({ image: 'genesis/node:20', network });
        await sandbox.check();
        execFileSync('docker', ['network', 'rm', network], { stdio: 'ignore' });
        return { sandbox, dockerRun: ['--network', network, 'genesis/node:20'], restore: () => undefined };
      },
    },
    {
      what: 'a daemon that stopped answering',
      code: 'agent-sandbox-failed',
      retryable: true,
      arrange: async () => {
        const sandbox = new DockerAgentSandbox({ image: 'genesis/node:20', network: 'genesis-agents' });
        await sandbox.check();
        const saved = process.env.DOCKER_HOST;
        process.env.DOCKER_HOST = `unix:///tmp/genesis-no-daemon-${randomUUID()}.sock`;
        const restore = () => {
          if (saved === undefined) delete process.env.DOCKER_HOST;
          else process.env.DOCKER_HOST = saved;
        };
        return { sandbox, dockerRun: ['genesis/node:20'], restore };
      },
    },
  ];
  for (const failure of dockerFailures) {
    itWith('docker')(`reads docker failing (${failure.what}) as docker run does (125), and the agent fails with ${failure.code}`, async () => {
      const { sandbox, dockerRun, restore } = await failure.arrange();
      try {
        const result = await launched(sandbox, ['sh', '-c', 'exit 0']);
        expect(result.exitCode).toBe(125);
        expect(dockerRunExit(dockerRun[dockerRun.length - 1]!, ['sh', '-c', 'exit 0'], dockerRun.slice(0, -1))).toBe(125);
        const { run } = await layout('127.0.0.1');
        const error = await new CommandAgent(['sh', '-c', 'exit 0'], { sandbox }).run(run).catch((e: unknown) => e);
        expect(error).toMatchObject({ code: failure.code, retryable: failure.retryable });
      } finally {
        restore();
      }
    });
  }

  itWith('docker')('gives the agent its stdin, and its stdout and stderr apart, as docker run -i did', async () => {
    const sandbox = new DockerAgentSandbox({ image: 'genesis/node:20', network: 'genesis-agents' });
    const result = await launched(sandbox, ['sh', '-c', 'cat; echo to-stderr >&2; exit 3'], 'the prompt\n');
    expect(result).toMatchObject({ exitCode: 3, stdout: 'the prompt', stderr: 'to-stderr' });
  });

  itWith('docker')('owns the container from the launch on: it exists before anything is spawned, and dispose removes it', async () => {
    const sandbox = new DockerAgentSandbox({ image: 'genesis/node:20', network: 'genesis-agents' });
    const { run } = await layout('127.0.0.1');
    const name = `${uniqueEpisode()}-x`;
    const launch = await sandbox.launch(['sleep', '60'], {
      workspace: run.workspace,
      home: join(dirname(run.promptFile), 'home'),
      env: run.env,
      readOnly: [run.promptFile],
      name,
    });
    const labelled = () =>
      execFileSync('docker', ['ps', '-a', '--filter', `label=genesis.agent.launch=genesis-agent-${name}`, '--format', '{{.State}}'], {
        encoding: 'utf8',
      }).trim();
    expect(labelled()).toBe('created');
    await launch.dispose();
    expect(labelled()).toBe('');
    await launch.dispose();
  });

  itWith('docker')(
    'removes at its check the agent containers whose owner on this host is gone, and only those (not a live owner, another host, another pid namespace)',
    async () => {
      const gone = spawnSync('true').pid!;
      const mark = `genesis.test.orphans=${randomUUID().slice(0, 8)}`;
      const make = (owner: string) =>
        execFileSync(
          'docker',
          ['create', '--label', 'genesis.sandbox=agent', '--label', `genesis.agent.owner=${owner}`, '--label', mark, 'genesis/node:20', 'true'],
          {
            encoding: 'utf8',
          },
        ).trim();
      const here = `${hostname()}/${/\[(\d+)\]/.exec(readlinkSync('/proc/self/ns/pid'))?.[1]}`;
      const orphan = make(`${here}/${gone}`);
      const live = make(`${here}/${process.pid}`);
      const elsewhere = make(`genesis-other-host/${here.split('/')[1]}/${gone}`);
      const otherNamespace = make(`${hostname()}/1/${gone}`);
      try {
        await new DockerAgentSandbox({ image: 'genesis/node:20', network: 'genesis-agents' }).check();
        const left = execFileSync('docker', ['ps', '-a', '--no-trunc', '--filter', `label=${mark}`, '--format', '{{.ID}}'], { encoding: 'utf8' }).split('\n');
        expect(left).not.toContain(orphan);
        expect(left).toContain(live);
        expect(left).toContain(elsewhere);
        expect(left).toContain(otherNamespace);
      } finally {
        execFileSync('docker', ['rm', '--force', orphan, live, elsewhere, otherNamespace], { stdio: 'ignore' });
      }
    },
  );

  itWith('docker')('removes the running container of a Genesis process killed with -9 at the next check', async () => {
    const { run } = await layout('127.0.0.1');
    const episode = uniqueEpisode();
    const script = [
      `const { createAgentSandbox } = await import(${JSON.stringify(new URL('../../../src/sandbox/create-agent-sandbox.ts', import.meta.url).pathname)});`,
      `const { CommandAgent } = await import(${JSON.stringify(new URL('../../../src/agents/command/command-agent.ts', import.meta.url).pathname)});`,
      "const sandbox = await createAgentSandbox({ kind: 'docker', image: 'genesis/node:20', network: 'genesis-agents' });",
      `await new CommandAgent(['sleep', '60'], { sandbox }).run(${JSON.stringify({ ...run, env: { ...run.env, GENESIS_EPISODE_ID: episode } })});`,
    ].join('\n');
    const owner = execa('node', ['--import', 'tsx', '--input-type=module', '--eval', script], { reject: false, cwd: process.cwd() });
    try {
      for (const deadline = Date.now() + 30_000; !agentContainers(episode).some((c) => c.endsWith(' running')); ) {
        if (Date.now() > deadline) throw new Error(`the agent of ${episode} never ran: ${(await owner.catch((e) => e)).all ?? ''}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      owner.kill('SIGKILL');
      await owner;
    }
    // Its launcher lives on (a process group of its own), attached to an agent nobody reads.
    expect(agentContainers(episode)).toHaveLength(1);
    await new DockerAgentSandbox({ image: 'genesis/node:20', network: 'genesis-agents' }).check();
    expect(await containersAppearing(episode, 1_000)).toEqual([]);
  });

  itWith('docker')('removes the container when the agent ends, before dispose (as --rm did, for an owner that died)', async () => {
    const sandbox = new DockerAgentSandbox({ image: 'genesis/node:20', network: 'genesis-agents' });
    const { launch, name } = await launchOf(sandbox, ['sh', '-c', 'exit 0']);
    try {
      await execa(launch.file, launch.args, { env: launch.env, extendEnv: false, reject: false });
      expect(execFileSync('docker', ['ps', '-a', '--filter', `label=genesis.agent.launch=genesis-agent-${name}`, '-q'], { encoding: 'utf8' }).trim()).toBe('');
    } finally {
      await launch.dispose();
    }
  });

  itWith('docker')('reports the exit code N of the agent in its result', async () => {
    const sandbox = await createAgentSandbox({ kind: 'docker', image: 'genesis/node:20', network: 'genesis-agents' });
    const { run } = await layout('127.0.0.1');
    const result = await new CommandAgent(['sh', '-c', 'exit 7'], { sandbox }).run(run);
    expect(result).toMatchObject({ exitCode: 7, timedOut: false, aborted: false });
  });
});

describe("the openai agent's commands", () => {
  for (const kind of ['docker', 'bwrap'] as const) {
    itWith(kind)(`run in its ${kind} sandbox, in the workspace, with the program that calls the model`, async () => {
      // A docker agent reaches this host's servers through its network's gateway, not the host's loopback.
      if (kind === 'docker') await ensureAgentNetwork('genesis-agents');
      const at = kind === 'docker' ? { listen: '0.0.0.0', host: agentsGateway() } : undefined;
      const replay = await startReplayServer(await loadRecording('tool-calls'), at);
      try {
        const endpoints = agentEndpoints({ kind: 'openai', baseUrl: replay.baseUrl });
        const sandbox = await createAgentSandbox({ kind, image: 'genesis/node:20', network: 'genesis-agents', endpoints });
        const { run } = await layout('127.0.0.1');
        await mkdir(join(run.workspace, 'test'), { recursive: true });
        await writeFile(
          join(run.workspace, 'test/a.test.js'),
          "import test from 'node:test';\nimport assert from 'node:assert';\nimport { a } from '../src/a.js';\ntest('a says a', () => assert.equal(a(), 'a'));\n",
        );
        await writeFile(join(run.workspace, 'package.json'), '{ "type": "module" }\n');
        const agent = new OpenAIAgent({
          baseUrl: replay.baseUrl,
          model: 'gpt-4.1-mini',
          maxTurns: 10,
          requestTimeoutMs: 10_000,
          commandTimeoutMs: 30_000,
          commandOutputBytes: 16_384,
          price: null,
          sandbox,
          endpoints,
        });
        const result = await agent.run({ ...run, prompt: 'Make module a.\n' });
        expect(replay.mismatches, result.log).toEqual([]);
        expect(result.exitCode).toBe(0);
        expect(result.log).toContain('exit code 0');
      } finally {
        await replay.close();
      }
    });
  }
});

describe('an agent sandboxed with bubblewrap', () => {
  itWith('bwrap')('sees only its workspace, its HOME and the system, with only the variables it is given', async () => {
    const { result, seen, run } = await probe('bwrap', '127.0.0.1');
    expect(result.exitCode).toBe(0);
    expect(seen).toMatchObject({
      'docker-socket': 'hidden',
      'world-refs': 'hidden',
      'gate-dir': 'hidden',
      leak: 'none',
      git: 'first commit',
      workspace: 'writable',
      home: 'writable',
      usr: 'readonly',
    });
    expectHomeHidden(seen['home-entries']);
    // As root, a uid of its own leased for the launch (the gates' range), never root.
    if (process.getuid?.() === 0) expect(Number(seen.uid)).toBeGreaterThanOrEqual(100_000);
    expect(await readFile(join(run.workspace, 'made-by-agent.txt'), 'utf8')).toBe('change\n');
  });

  itWith('bwrap')("reaches the outside through a network namespace of its own, and none of this host's loopback services", async () => {
    const outside = await startOutsideServer('answers');
    try {
      const { seen, run } = await probe('bwrap', outside.host, outside.port);
      expect(seen.model).toBe('answers');
      expect(seen['host-loopback']).toBe('unreachable');
      // A service on 0.0.0.0 of this host is out of reach through the host's own address too (root: a packet filter).
      if (process.getuid?.() === 0) expect(seen['host-address']).toBe('unreachable');
      // Redis listens on this host's 127.0.0.1:6379; from the agent, no address leads there.
      const addresses = run.env.HOST_ADDRS!.split(',');
      expect(addresses).toContain('127.0.0.1');
      for (const address of addresses)
        expect(seen[`redis@${address}`], `redis through ${address}`).toMatch(/^(ECONNREFUSED|ENETUNREACH|EHOSTUNREACH|timeout)$/);
      expect(outside.received().length).toBe(1);
    } finally {
      await outside.close();
    }
  });

  itWith('bwrap')("cannot reach the gate: the gate's sandbox has no network interface but loopback", async () => {
    const dir = await tempDir('genesis-gate-net-');
    const gate = await new BwrapSandbox().run({ command: 'cat /proc/net/dev', workDir: dir, timeoutMs: 30_000, limits: { cpus: 1, memoryMb: 256, pids: 64 } });
    const interfaces = gate.output
      .split('\n')
      .slice(2)
      .map((l) => l.trim().split(':')[0])
      .filter(Boolean);
    expect(interfaces).toEqual(['lo']);
  });

  itWith('bwrap')('fails with agent-not-found before starting when the program is missing', async () => {
    const sandbox = await createAgentSandbox({ kind: 'bwrap', image: 'genesis/node:20', network: 'genesis-agents' });
    const { run } = await layout('127.0.0.1');
    const error = await new CommandAgent(['genesis-no-such-agent'], { sandbox }).run(run).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'agent-not-found', retryable: false });
  });
});
