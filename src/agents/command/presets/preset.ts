import type { PresetName } from '../../../manifest/preset-names.js';
import type { AgentUsage } from '../../usage/usage.js';

/** What a preset's command line depends on. */
export interface PresetOptions {
  /** `agent.model`, when set; otherwise the CLI's own default model. */
  model?: string;
  /** `agent.args`: appended after the preset's own flags. */
  args: readonly string[];
  /** The agent runs in an agent sandbox (docker or bwrap): CLIs may skip their own sandbox. */
  sandboxed: boolean;
}

/**
 * Reads usage from an agent's standard output as it streams. Fed with chunks of stdout only
 * (never stderr, which the agent may interleave mid-line), it keeps what it needs, not the output.
 */
export interface UsageReader {
  push(chunk: string): void;
  /** What the output reported; fields it did not report are null. */
  usage(): AgentUsage;
}

/**
 * How Genesis drives one CLI agent with the `command` adapter: the argv it runs (the prompt goes
 * on stdin, and `{promptFile}` is replaced by the prompt file's path), the variables it passes
 * through by default, and how it reads usage from the agent's output.
 */
export interface CommandPreset {
  readonly name: PresetName;
  /** How a person installs the CLI; shown when its binary is missing. */
  readonly install: string;
  /** Variables passed through when set (credentials, endpoints), in addition to `agent.env`. */
  readonly env: readonly string[];
  argv(options: PresetOptions): string[];
  usageReader(): UsageReader;
}
