import { copyHomeFiles } from './home-files.js';
import { mkdir } from 'node:fs/promises';
import type { AgentLaunch, AgentSandbox, AgentSandboxKind, AgentSandboxSpec } from '../agent-sandbox.js';

/** What `genesis run` and `genesis doctor` say when a world's agents run unconfined. */
export const NONE_AGENT_SANDBOX_WARNING =
  'agent.sandbox is "none": agents run on this machine as your user, with your files (the world\'s ' +
  "refs and ledger, other episodes' workspaces, your home), your network (Redis, the dashboard) and " +
  'the Docker socket. Use it only for agents you trust; remove the line for the default (auto).';

/**
 * No isolation (`agent.sandbox: none`, only when the manifest says so): the agent is a local
 * process of the user running Genesis, with that user's files and network. What it keeps of the
 * contract is the environment (only `env`) and the process group the caller kills at the end.
 */
export class NoneAgentSandbox implements AgentSandbox {
  readonly kind: AgentSandboxKind = 'none';
  readonly hostBinaries = true;

  async check(): Promise<void> {}

  async launch(argv: readonly string[], spec: AgentSandboxSpec): Promise<AgentLaunch> {
    await mkdir(spec.home, { recursive: true });
    await copyHomeFiles(spec.homeFiles, spec.home);
    return { file: argv[0]!, args: argv.slice(1), env: { ...spec.env, HOME: spec.home }, dispose: async () => undefined };
  }
}
