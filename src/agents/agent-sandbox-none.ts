import { mkdir } from 'node:fs/promises';
import type { AgentLaunch, AgentSandbox, AgentSandboxKind, AgentSandboxSpec } from './agent-sandbox.js';

/**
 * No isolation (`agent.sandbox: none`, the default): the agent is a local process of the user
 * running Genesis, with that user's files and network. What it keeps of the contract is the
 * environment (only `env`) and the process group the caller kills at the end.
 */
export class NoneAgentSandbox implements AgentSandbox {
  readonly kind: AgentSandboxKind = 'none';
  readonly hostBinaries = true;

  async check(): Promise<void> {}

  async launch(argv: readonly string[], spec: AgentSandboxSpec): Promise<AgentLaunch> {
    await mkdir(spec.home, { recursive: true });
    return { file: argv[0]!, args: argv.slice(1), env: { ...spec.env, HOME: spec.home }, dispose: async () => undefined };
  }
}
