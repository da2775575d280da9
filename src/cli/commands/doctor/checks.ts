import { execa } from 'execa';
import { agentsRunProcesses } from '../../../sandbox/create-agent-sandbox.js';
import { BwrapAgentSandbox } from '../../../sandbox/agent/bwrap-agent-sandbox.js';
import { NONE_AGENT_SANDBOX_WARNING } from '../../../sandbox/agent/none-agent-sandbox.js';
import { DepsCache } from '../../../deps/cache/cache.js';
import { formatMb, readDepsCacheStatus } from '../../../deps/cache/status.js';
import { isGenesisError } from '../../../errors/genesis-error.js';
import { connectRedis } from '../../../queue/redis/connection.js';
import { BwrapSandbox } from '../../../sandbox/gate/bwrap/bwrap-sandbox.js';
import { DockerSandbox } from '../../../sandbox/gate/docker/docker-sandbox.js';
import { parseManifest } from '../../../manifest/parse.js';
import type { WorldManifest } from '../../../manifest/schema.js';
import type { WorldRepo } from '../../../world/world-repo.js';
import { LocalWorld } from '../../../world/local-world.js';
import { checkAgentBinary, checkModelRoad } from './agent.js';
import { checkAgentClis } from './agent-clis.js';

/** `fail`: something needed is missing (doctor exits 1); `warn`: missing but not needed here. */
export type CheckStatus = 'ok' | 'warn' | 'fail';

/** One line of `genesis doctor`. */
export interface DoctorCheck {
  name: string;
  status: CheckStatus;
  detail: string;
  /** What to do, for anything not ok. */
  hint: string | null;
}

export interface DoctorOptions {
  /** A world whose manifest says what is needed; without it, the default `auto` sandbox is assumed. */
  world?: string | undefined;
  redis: string;
  /** Whether Redis was asked for (--redis or GENESIS_REDIS): then it is needed, else only nice to have. */
  redisNeeded: boolean;
}

/** Node version from package.json's engines. */
export const MIN_NODE = [20, 12] as const;
/** `git merge-tree --write-tree`, which the integrator's replay uses, came with 2.38. */
export const MIN_GIT = [2, 38] as const;
const SETUP = 'run `bash scripts/setup-services.sh` (installs and starts Docker, bubblewrap and Redis, and builds the image)';

const atLeast = (version: number[], min: readonly number[]) => (version[0] ?? 0) > min[0]! || ((version[0] ?? 0) === min[0] && (version[1] ?? 0) >= min[1]!);
const problem = (name: string, status: CheckStatus, detail: string, hint: string | null): DoctorCheck => ({ name, status, detail, hint });
const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));
const hintOf = (error: unknown, fallback: string) => (isGenesisError(error) && error.hint ? error.hint : fallback);

/**
 * Checks what Genesis needs on this machine, in the order a person fixes them, using the same
 * probes the run uses (DockerSandbox.check, BwrapSandbox.check, connectRedis, parseManifest).
 * What counts as needed follows the world: its `verify.sandbox` and `verify.image`.
 */
export async function runDoctorChecks(opts: DoctorOptions): Promise<DoctorCheck[]> {
  const world = opts.world ? await checkWorld(opts.world) : null;
  const manifest = world?.manifest ?? null;
  const choice = manifest?.verify.sandbox ?? 'auto';
  const image = manifest?.verify.image ?? 'genesis/node:20';
  const [git, docker, bwrap, redis] = await Promise.all([checkGit(), probeDocker(image), probeBwrap(), checkRedis(opts)]);

  const dockerWorks = docker.daemon.ok && docker.image.ok;
  const need = { docker: choice === 'docker', bwrap: choice === 'bwrap' };
  if (choice === 'auto' && !dockerWorks && !bwrap.ok) Object.assign(need, { docker: true, bwrap: true });
  const why =
    choice === 'auto' ? (dockerWorks ? 'not needed: auto uses docker' : 'not needed: auto uses bubblewrap') : `not needed: the world uses sandbox ${choice}`;
  const graded = (name: string, r: Probe, needed: boolean): DoctorCheck =>
    r.ok ? problem(name, 'ok', r.detail, null) : problem(name, needed ? 'fail' : 'warn', needed ? r.detail : `${r.detail} (${why})`, r.hint);

  const checks = [
    checkNode(),
    git,
    graded('docker', docker.daemon, need.docker),
    graded('image', docker.image, need.docker),
    graded('bwrap', bwrap, need.bwrap),
  ];
  if (choice === 'none')
    checks.push(
      problem(
        'sandbox',
        'warn',
        'verify.sandbox is none: gate commands run without any isolation',
        'set verify.sandbox: auto in world.yaml once Docker or bubblewrap works',
      ),
    );
  const agentChoice = manifest?.agent.sandbox ?? 'auto';
  const agentsRun = manifest === null || agentsRunProcesses(manifest.agent);
  const agentSandbox = agentsRun ? await checkAgentSandbox(agentChoice, docker.daemon) : null;
  if (manifest && agentSandbox) checks.push(agentSandbox);
  const gate =
    choice === 'auto'
      ? dockerWorks
        ? 'docker'
        : bwrap.ok
          ? 'bwrap'
          : null
      : choice === 'docker'
        ? dockerWorks
          ? 'docker'
          : null
        : choice === 'bwrap'
          ? bwrap.ok
            ? 'bwrap'
            : null
          : 'none';
  checks.push(confinement(gate, agentsRun ? { choice: agentChoice, ok: agentSandbox?.status === 'ok' } : null, manifest !== null));
  checks.push(await checkDepsCache(manifest));
  checks.push(redis);
  if (world) checks.push(world.check);
  const repo = world?.repo;
  const agent =
    repo && manifest ? await checkAgentBinary(async (path) => (await repo.readFile(`refs/heads/${manifest.branch}`, path)) !== null, manifest) : null;
  if (agent) checks.push(agent);
  const road = manifest && world ? checkModelRoad(manifest) : null;
  if (road) checks.push(road);
  checks.push(await checkAgentClis());
  return checks;
}

/** The dependency cache (verify.deps): where, how full, and whether it can be written. */
async function checkDepsCache(manifest: WorldManifest | null): Promise<DoctorCheck> {
  const status = await readDepsCacheStatus(new DepsCache());
  const detail = `${status.root}: ${status.sets} set(s), ${formatMb(status.bytes)} of ${formatMb(status.capBytes)}`;
  if (status.writable) return problem('deps-cache', 'ok', detail, null);
  const needed = manifest?.verify.deps !== undefined;
  return problem(
    'deps-cache',
    needed ? 'fail' : 'warn',
    `${status.root} cannot be written: ${status.problem}`,
    'set GENESIS_CACHE_DIR to a directory this user can write (the cache goes to $GENESIS_CACHE_DIR/deps)',
  );
}

/** Where the world's agents run: unconfined only when the manifest says none, and then a warning. */
async function checkAgentSandbox(choice: WorldManifest['agent']['sandbox'], daemon: Probe): Promise<DoctorCheck> {
  if (choice === 'none')
    return problem(
      'agent-sandbox',
      'warn',
      NONE_AGENT_SANDBOX_WARNING,
      'remove agent.sandbox from world.yaml (the default, auto, confines agents with bubblewrap)',
    );
  if (choice === 'docker')
    return daemon.ok
      ? problem('agent-sandbox', 'ok', 'agents run in containers on a network of their own', null)
      : problem('agent-sandbox', 'fail', daemon.detail, daemon.hint);
  try {
    await new BwrapAgentSandbox().check();
    return problem('agent-sandbox', 'ok', 'agents run under bubblewrap with a network namespace of their own (slirp4netns)', null);
  } catch (error) {
    return problem('agent-sandbox', 'fail', messageOf(error), hintOf(error, SETUP));
  }
}

const GATE_CONFINED_BY: Record<string, string> = {
  docker: 'gates: a container with no network (docker)',
  bwrap: 'gates: bubblewrap, no network, as a leased unprivileged uid',
  none: 'gates: NOT confined (verify.sandbox: none)',
};
const AGENT_CONFINED_BY: Record<string, string> = {
  auto: 'agents: bubblewrap with a network namespace of their own, as a leased unprivileged uid',
  bwrap: 'agents: bubblewrap with a network namespace of their own, as a leased unprivileged uid',
  docker: 'agents: a container on a network of their own (docker)',
  none: 'agents: NOT confined (agent.sandbox: none)',
};

/**
 * What confines what here, in one line each: the sandbox the gates get and the one the agents
 * get. Where one is missing Genesis refuses the work (no-sandbox, agent-sandbox-unavailable, and
 * `genesis worker --refuse-unconfined` takes no job), never runs it unconfined: that is said too.
 */
export function confinement(gate: string | null, agent: { choice: string; ok: boolean } | null, forWorld: boolean): DoctorCheck {
  const lines = [
    gate ? GATE_CONFINED_BY[gate]! : 'gates: nothing can confine them here, so they are refused (no-sandbox)',
    agent === null
      ? "agents: the world's agents start no process (script or sim)"
      : agent.ok
        ? AGENT_CONFINED_BY[agent.choice]!
        : 'agents: nothing can confine them here, so their episodes are refused (agent-sandbox-unavailable), never run unconfined',
  ];
  // Without a world, agents are only assumed (the default, command agents): their refusal warns.
  const refused = gate === null || (forWorld && agent?.ok === false);
  const unconfined = gate === 'none' || agent?.choice === 'none';
  return problem(
    'confines',
    refused ? 'fail' : unconfined || agent?.ok === false ? 'warn' : 'ok',
    lines.join('\n'),
    refused || agent?.ok === false
      ? 'see the bwrap, docker and agent-sandbox lines; in a container or pod, docs/guides/kubernetes.md (Confinement) says what it must allow'
      : unconfined
        ? 'remove sandbox: none from world.yaml once a sandbox works here'
        : null,
  );
}

function checkNode(): DoctorCheck {
  const version = process.versions.node.split('.').map(Number);
  const detail = `${process.versions.node} (Genesis needs ≥ ${MIN_NODE.join('.')})`;
  return atLeast(version, MIN_NODE)
    ? problem('node', 'ok', detail, null)
    : problem('node', 'fail', detail, `install Node ${MIN_NODE[0]} (${MIN_NODE.join('.')} or later), e.g. from nodejs.org or nvm`);
}

async function checkGit(): Promise<DoctorCheck> {
  const result = await execa('git', ['--version'], { reject: false });
  const match = /(\d+)\.(\d+)(?:\.(\d+))?/.exec(String(result.stdout));
  if (result.exitCode !== 0 || !match) return problem('git', 'fail', 'git is not installed', 'install git 2.38 or later: sudo apt-get install -y git');
  const version = [Number(match[1]), Number(match[2])];
  const detail = `${match[0]} (merge-tree --write-tree needs ≥ ${MIN_GIT.join('.')})`;
  return atLeast(version, MIN_GIT) ? problem('git', 'ok', detail, null) : problem('git', 'fail', detail, 'install git 2.38 or later (Debian 12 has 2.39)');
}

interface Probe {
  ok: boolean;
  detail: string;
  hint: string | null;
}

async function probeDocker(image: string): Promise<{ daemon: Probe; image: Probe }> {
  try {
    const sandbox = new DockerSandbox({ image });
    await sandbox.check();
    const { id, toolchain } = await sandbox.describeImage();
    const detail = `${image} is present (${id.slice(0, 19)}${toolchain ? `, ${toolchain}` : ''})`;
    return { daemon: { ok: true, detail: 'the daemon answers', hint: null }, image: { ok: true, detail, hint: null } };
  } catch (error) {
    if (isGenesisError(error) && error.code === 'sandbox-image-missing') {
      return {
        daemon: { ok: true, detail: 'the daemon answers', hint: null },
        image: { ok: false, detail: `${image} is not built`, hint: hintOf(error, SETUP) },
      };
    }
    if (isGenesisError(error) && error.code === 'sandbox-image-host-toolchain') {
      return { daemon: { ok: true, detail: 'the daemon answers', hint: null }, image: { ok: false, detail: error.message, hint: hintOf(error, SETUP) } };
    }
    return {
      daemon: { ok: false, detail: messageOf(error), hint: hintOf(error, SETUP) },
      image: { ok: false, detail: `${image}: not checked, Docker does not answer`, hint: 'fix Docker first' },
    };
  }
}

async function probeBwrap(): Promise<Probe> {
  try {
    await new BwrapSandbox().check();
    return { ok: true, detail: 'can start a sandbox', hint: null };
  } catch (error) {
    return { ok: false, detail: messageOf(error), hint: hintOf(error, SETUP) };
  }
}

async function checkRedis(opts: DoctorOptions): Promise<DoctorCheck> {
  try {
    const redis = await connectRedis(opts.redis, { timeoutMs: 2000, name: 'genesis-doctor' });
    redis.disconnect();
    return problem('redis', 'ok', `answers at ${opts.redis}`, null);
  } catch (error) {
    const detail = `no answer at ${opts.redis}`;
    return opts.redisNeeded
      ? problem('redis', 'fail', detail, hintOf(error, SETUP))
      : problem('redis', 'warn', `${detail} (needed only for --redis: the distributed queue and genesis worker)`, hintOf(error, SETUP));
  }
}

async function checkWorld(path: string): Promise<{ manifest: WorldManifest | null; check: DoctorCheck; repo?: WorldRepo }> {
  let world: WorldRepo;
  try {
    world = await LocalWorld.open(path);
  } catch (error) {
    return { manifest: null, check: problem('world', 'fail', messageOf(error), hintOf(error, 'pass the directory genesis init made')) };
  }
  const text = await world.readFile('HEAD', 'world.yaml');
  if (text === null)
    return {
      manifest: null,
      check: problem(
        'world',
        'fail',
        `${world.path}: the accepted head has no world.yaml`,
        'a world keeps its manifest at the repository root; re-create it with genesis init',
      ),
    };
  const { manifest, errors, warnings } = parseManifest(text);
  if (!manifest)
    return {
      manifest: null,
      check: problem(
        'world',
        'fail',
        `${world.path}: found issues in world.yaml:\n${errors.map((e) => `  - ${e}`).join('\n')}`,
        'fix the fields named above and commit world.yaml to the accepted branch',
      ),
    };
  const head = await world.resolveRef(`refs/heads/${manifest.branch}`);
  if (!head)
    return {
      manifest,
      check: problem(
        'world',
        'fail',
        `${world.path}: no branch "${manifest.branch}"`,
        'check `branch:` in world.yaml, or re-create the world with genesis init',
      ),
    };
  const detail = `${world.path}: world.yaml is valid (${manifest.tasks.length} tasks, sandbox ${manifest.verify.sandbox}, agent ${manifest.agent.kind})`;
  return warnings.length === 0
    ? { manifest, repo: world, check: problem('world', 'ok', detail, null) }
    : { manifest, repo: world, check: problem('world', 'warn', `${detail}; ${warnings.join('; ')}`, 'see the warnings; the world runs as it is') };
}
