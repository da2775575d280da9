import { mkdir, rm } from 'node:fs/promises';
import { rmSync } from 'node:fs';
import { execa } from 'execa';
import { GenesisError } from '../../../errors/genesis-error.js';
import { readDockerCliFailure } from '../../gate/docker/errors.js';
import { BIND_HOST_USR_LABEL } from '../../gate/docker/docker-sandbox.js';
import { leaseIsolatedUser, prepareWorkDir, SANDBOX_GID, SANDBOX_UID, type SandboxUser } from '../../gate/work-dir.js';
import { agentReadOnlyPaths, parentsFirst } from '../mounts.js';
import { confineAgentDisk } from '../workspace-quota.js';
import { homeFileBinds } from '../home-files.js';
import { writeAgentAccounts, type AgentAccounts } from '../accounts.js';
import type { AgentLaunch, AgentSandbox, AgentSandboxKind, AgentSandboxSpec } from '../../agent-sandbox.js';
import { agentNetworkGateway, ensureAgentNetwork } from './network.js';
import { AGENT_LAUNCH_LABEL, removeAgentContainer } from './remove.js';
import { dockerCreateFailedArgv, dockerStartArgv } from './start.js';
import { AGENT_OWNER_LABEL, agentOwner, removeOrphanedAgentContainers } from './orphans.js';

export interface DockerAgentSandboxOptions {
  /** Image the agent runs in (DEFAULT_AGENT_IMAGE unless agent.image says). An image labelled genesis.bind-host-usr=1 gets the host's /usr. */
  image: string;
  /** Docker network of the agents; created when missing. @default 'genesis-agents' */
  network: string;
}

/** How long `docker create` may take before the launch gives up on it (a daemon that hangs). */
const CREATE_TIMEOUT_MS = 120_000;
/** How long a create given up on is watched for, so that a late one is removed too. */
const LATE_CREATE_MS = 10_000;
/** Host paths a skeleton image needs for the host's programs and for TLS to a hosted model. */
const HOST_SYSTEM = ['/usr', '/etc/alternatives', '/etc/ssl', '/etc/ca-certificates'];
const LABEL = 'genesis.sandbox';
/** Image label naming its CA bundle, for what runs in it with network (the gate image sets no CA variable itself). */
export const CA_BUNDLE_LABEL = 'genesis.ca-bundle';

/**
 * Runs the agent in a container of its own (the `docker` CLI, so the agent's stdin, output and
 * process group work as for a local process): on the agents' network, which reaches the model and
 * not the gate (gate containers have no network at all) nor this host's loopback services;
 * read-only root, private /tmp, all capabilities dropped, no-new-privileges, a uid leased for the
 * launch (or the orchestrator's own uid), and only the workspace and HOME writable. Variables are passed by name
 * (`-e NAME`), so their values never appear in a process list.
 *
 * The container's lifetime is Genesis's, whenever the agent is killed: `launch` creates it
 * (`docker create`, awaited, under a name and a label of this launch), the process the caller
 * spawns only starts it attached, and `dispose` removes it by name and label until none is left.
 * Killing a `docker run` client instead could land before the daemon had made the container,
 * which it then made after the cleanup had looked for it. Exit codes read as `docker run`'s did
 * (see agent-docker-start.ts), so `dockerRunFailure` reads them. Each container names its owner
 * process; `check` removes those whose owner on this host is gone.
 */
export class DockerAgentSandbox implements AgentSandbox {
  readonly kind: AgentSandboxKind = 'docker';
  private hostUsr: boolean | null = null;
  private gatewayAddress: Promise<string> | null = null;
  private caBundle: string | null = null;

  constructor(private readonly options: DockerAgentSandboxOptions) {}

  get hostBinaries(): boolean {
    return this.hostUsr ?? false;
  }

  async check(): Promise<void> {
    const labels = await execa('docker', ['image', 'inspect', '--format', '{{json .Config.Labels}}', this.options.image], { reject: false, timeout: 30_000 });
    if (labels.failed) {
      const kind = readDockerCliFailure(labels.stderr);
      // A daemon that does not answer may answer the next episode; the rest needs a person.
      if (kind === 'unavailable')
        throw new GenesisError('docker-unavailable', `the Docker daemon does not answer: ${labels.stderr.trim() || labels.shortMessage}`, {
          hint: 'Run `bash scripts/setup-services.sh` to start Docker.',
        });
      if (kind === 'permission-denied')
        throw new GenesisError('docker-permission-denied', `docker refused this user: ${labels.stderr.trim()}`, {
          hint: 'add the user that runs Genesis to the docker group, or set agent.sandbox to bwrap',
        });
      const missing = kind === 'image-missing';
      throw new GenesisError(
        'agent-sandbox-unavailable',
        missing ? `the agent image ${this.options.image} does not exist` : `docker cannot run agents here: ${labels.stderr || labels.shortMessage}`,
        {
          hint: missing ? imageHint(this.options.image) : 'Run `bash scripts/setup-services.sh` to start Docker, or set agent.sandbox to bwrap or none.',
        },
      );
    }
    const parsed = JSON.parse(labels.stdout || 'null') as Record<string, string> | null;
    this.hostUsr = parsed?.[BIND_HOST_USR_LABEL] === '1';
    this.caBundle = parsed?.[CA_BUNDLE_LABEL] || null;
    await ensureAgentNetwork(this.options.network);
    // What a Genesis process killed with -9 left on this host goes before this one adds its own.
    await removeOrphanedAgentContainers({ PATH: process.env.PATH ?? '/usr/bin:/bin', ...dockerClientEnv() });
  }

  async modelHost(): Promise<string> {
    if (this.hostUsr === null) await this.check();
    this.gatewayAddress ??= agentNetworkGateway(this.options.network).then((address) => {
      if (address) return address;
      throw new GenesisError(
        'agent-sandbox-unavailable',
        `the agents' docker network ${this.options.network} has no gateway address, so its agents cannot reach the model gateway`,
        {
          hint: 'name a bridge network in agent.network (the default genesis-agents is one), or use the default agent sandbox',
        },
      );
    });
    return this.gatewayAddress;
  }

  async launch(argv: readonly string[], spec: AgentSandboxSpec): Promise<AgentLaunch> {
    if (this.hostUsr === null) await this.check();
    await mkdir(spec.home, { recursive: true });
    const quota = await confineAgentDisk(spec);
    const homeFiles = await homeFileBinds(spec.homeFiles, spec.home);
    const asRoot = process.getuid?.() === 0;
    // As root the agent runs as a uid of its own for the launch (no other live sandbox, bwrap or docker, has it), which must own what it may write.
    const lease = asRoot ? await leaseIsolatedUser(spec.workspace) : null;
    let accounts: AgentAccounts | undefined;
    let readOnly: string[];
    try {
      if (lease) {
        await prepareWorkDir(spec.workspace, lease.user);
        await prepareWorkDir(spec.home, lease.user);
        accounts = await accountFiles(lease.user, spec.home);
      }
      readOnly = await agentReadOnlyPaths(argv, spec, this.hostUsr!);
    } catch (error) {
      lease?.release();
      if (accounts) rmSync(accounts.dir, { recursive: true, force: true });
      throw error;
    }
    const user = lease ? `${lease.user.uid}:${lease.user.gid}` : `${process.getuid?.() ?? SANDBOX_UID}:${process.getgid?.() ?? SANDBOX_GID}`;
    const binds = parentsFirst([
      ...(this.hostUsr ? HOST_SYSTEM : []).map((target) => ({ target, mode: 'ro' })),
      ...readOnly.map((target) => ({ target, mode: 'ro' })),
      ...[spec.workspace, spec.home].map((target) => ({ target, mode: 'rw' })),
    ]);
    const homeVolumes = homeFiles.flatMap((b) => ['-v', `${b.source}:${b.target}:ro`]);
    const accountVolumes = (accounts?.files ?? []).flatMap((f) => ['-v', `${f.path}:/etc/${f.name}:ro`]);
    const env: Record<string, string> = { ...spec.env, HOME: spec.home };
    // An image with programs of its own has its own PATH.
    if (!this.hostUsr) delete env.PATH;
    // The agent reaches its model through this machine's certificate authorities, which the image's bundle holds.
    if (this.caBundle && env.NODE_EXTRA_CA_CERTS === undefined) env.NODE_EXTRA_CA_CERTS = this.caBundle;
    const name = `genesis-agent-${spec.name}`.replace(/[^a-zA-Z0-9_.-]/g, '-');
    const args = [
      'create',
      '-i',
      '--name',
      name,
      '--label',
      `${LABEL}=agent`,
      '--label',
      `${AGENT_LAUNCH_LABEL}=${name}`,
      '--label',
      `${AGENT_OWNER_LABEL}=${agentOwner()}`,
      '--network',
      this.options.network,
      '--hostname',
      'agent',
      '--user',
      user,
      '--read-only',
      '--tmpfs',
      `/tmp:rw,nosuid,nodev,exec,size=${Math.min(1024, spec.diskMb ?? 1024)}m`,
      '--cap-drop',
      'ALL',
      '--security-opt',
      'no-new-privileges',
      ...binds.flatMap((b) => ['-v', `${b.target}:${b.target}:${b.mode}`]),
      ...homeVolumes,
      ...accountVolumes,
      '-w',
      spec.workspace,
      ...Object.keys(env).flatMap((key) => ['-e', key]),
      this.options.image,
      ...argv,
    ];
    const docker = { PATH: process.env.PATH ?? '/usr/bin:/bin', ...dockerClientEnv() };
    // The client reads the values of `-e NAME` from its own environment, and finds the daemon there.
    const client = { ...env, ...docker };
    const created = await execa('docker', args, { reject: false, timeout: CREATE_TIMEOUT_MS, env: client, extendEnv: false });
    // Given up on, the client leaves a create the daemon may still finish: look for it a while.
    const lingerMs = created.timedOut ? LATE_CREATE_MS : 0;
    const dispose = async () => {
      try {
        await removeAgentContainer(name, { env: docker, lingerMs });
      } finally {
        // The container and its processes are gone: the uid is free for another sandbox.
        lease?.release();
        // Not rmSync: a launch ends while other episodes' work waits on this process's one thread.
        if (accounts) await rm(accounts.dir, { recursive: true, force: true });
      }
    };
    const [file, ...launcher] = created.exitCode === 0 ? dockerStartArgv(name) : dockerCreateFailedArgv(createFailure(created));
    return { ...quota, file: file!, args: launcher, env: client, dispose };
  }
}

/**
 * An /etc/passwd and /etc/group with root and the leased uid (`agent`, HOME its home) alone, bound
 * over the image's, whose own files are not read from here. Removed at dispose.
 */
async function accountFiles(user: SandboxUser, home: string): Promise<AgentAccounts> {
  return writeAgentAccounts(user, home, async (name) => (name === 'passwd' ? 'root:x:0:0:root:/root:/bin/sh' : 'root:x:0:'));
}

/** What a failed `docker create` said, for the agent's log (docker's own words when it has any). */
function createFailure(created: { stderr: string; shortMessage?: string; timedOut: boolean }): string {
  if (created.timedOut) return `docker: the daemon did not create the agent's container within ${CREATE_TIMEOUT_MS / 1000} s`;
  return created.stderr.trim() || created.shortMessage || 'docker create failed';
}

/** Where the docker client finds its daemon: the orchestrator's own settings. */
function dockerClientEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ['DOCKER_HOST', 'DOCKER_CONTEXT', 'DOCKER_CERT_PATH', 'DOCKER_TLS_VERIFY', 'DOCKER_CONFIG']) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}

/**
 * The image of the docker agent sandbox when agent.image names none: Node, git and the pinned
 * agent CLIs (sandboxes/agent, built by `sandboxes/build-images.sh --agents`).
 */
export const DEFAULT_AGENT_IMAGE = 'genesis/agent:latest';

/** What to do about a missing agent image: the builder's command for Genesis's own images. */
function imageHint(image: string): string {
  if (image === DEFAULT_AGENT_IMAGE) return 'build it: `bash sandboxes/build-images.sh --agents` (Node, git and the pinned agent CLIs), or set agent.image';
  if (image.startsWith('genesis/')) return 'build it (`bash sandboxes/build-images.sh`), or remove agent.image for the agent image';
  return 'build or load it (`docker image ls` lists what this host has), or remove agent.image for the default agent image';
}

/** How a `docker run` exit code reads: 125 the daemon refused to start it, 127 no such program in the image. */
export function dockerRunFailure(exitCode: number, log: string, program: string): GenesisError | null {
  if (exitCode === 127 && log.includes(`exec: "${program}"`) && /executable file not found|no such file or directory/i.test(log)) {
    return new GenesisError('agent-not-found', `the agent command "${program}" was not found in the agent's docker image`, {
      hint: `the default agent image ${DEFAULT_AGENT_IMAGE} carries the pinned CLIs (\`bash sandboxes/build-images.sh --agents\` builds it): remove agent.image to use it, or install the CLI in the image agent.image names`,
    });
  }
  if (exitCode === 125) {
    const said = log.trim().split('\n').slice(-3).join(' ');
    const kind = readDockerCliFailure(log);
    if (kind === 'transient' || kind === 'unavailable') {
      return new GenesisError('agent-sandbox-failed', `docker could not start the agent's container: ${said}`, {
        hint: 'check agent.image and agent.network; `docker network ls` lists the networks',
      });
    }
    // A missing image, a refused option or a permission fails every next episode the same way.
    return new GenesisError('agent-sandbox-invalid', `docker refused the agent's container: ${said}`, {
      hint:
        kind === 'permission-denied'
          ? 'add the user that runs Genesis to the docker group, or set agent.sandbox to bwrap'
          : kind === 'image-missing'
            ? 'build the image agent.image names (`bash sandboxes/build-images.sh --agents` builds the default, genesis/agent:latest) or set agent.image'
            : 'fix what docker names in agent.image, agent.network or agent.limits; retrying cannot help',
    });
  }
  return null;
}
