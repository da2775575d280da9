import { stringify } from 'yaml';
import { bwrapAnswers, dockerAnswers } from '../../helpers/services.js';

/**
 * The cells of the attack matrix: every agent kind Genesis launches or replays, in each sandbox.
 * A cheating agent is one shell script (run by the `command` agent, and by a preset's path, which
 * reads its output as that CLI's) or one recording (replayed by the `script` agent); the `openai`
 * agent's cells, which need a scripted model, are in openai-agent-attacks.
 */
export type AgentKind = 'command' | 'preset' | 'script';
export const AGENT_KINDS: readonly AgentKind[] = ['command', 'preset', 'script'];
export type SandboxKind = 'bwrap' | 'docker';
export const SANDBOXES: readonly SandboxKind[] = ['bwrap', 'docker'];

/** Whether the sandbox answers here (a describe's set-up skips its worlds when it does not; its tests then fail or skip as itWith says). */
export function sandboxAnswers(sandbox: SandboxKind): boolean {
  return sandbox === 'docker' ? dockerAnswers() : bwrapAnswers();
}

/** The manifest's `agent` of a cell: the cheater confined by the cell's sandbox. */
export function agentOf(kind: AgentKind, sandbox: SandboxKind): Record<string, unknown> {
  const confined = { timeoutSec: 60, sandbox, ...(sandbox === 'docker' ? { image: 'genesis/node:20' } : {}) };
  if (kind === 'script') return { kind: 'script', script: '.genesis/recording.yaml', ...confined };
  if (kind === 'preset') return { kind: 'command', preset: 'claude-code', command: ['sh', '.genesis/agent.sh'], ...confined };
  return { kind: 'command', command: ['sh', '.genesis/agent.sh'], ...confined };
}

/**
 * The world's files that make the cheater of every kind: its shell script and its recording (one
 * step per task: files to write, a line to say).
 */
export function cheaterFiles(script: string, recording: Record<string, { say?: string; write: Record<string, string> }>): Record<string, string> {
  return {
    '.genesis/agent.sh': script,
    '.genesis/recording.yaml': stringify({ tasks: Object.fromEntries(Object.entries(recording).map(([task, step]) => [task, [step]])) }),
  };
}
