import type { PresetName } from '../../../manifest/preset-names.js';
import type { AgentUsage, ModelPrice } from '../../usage/usage.js';
import type { CliFailure } from './cli-failure.js';

/** What a preset's command line depends on. */
export interface PresetOptions {
  /** `agent.model`, when set; otherwise the CLI's own default model. */
  model?: string;
  /** `agent.args`: appended after the preset's own flags. */
  args: readonly string[];
  /** The agent runs in an agent sandbox (docker or bwrap): CLIs may skip their own sandbox. */
  sandboxed: boolean;
  /** `agent.baseUrl`: the model endpoint in the form the vendor's SDK documents (through the gateway, the gateway's URL for it). */
  baseUrl?: string;
  /**
   * No `agent.baseUrl` is set: `baseUrl` is the gateway standing in for the vendor's own endpoint
   * (`defaultUpstream`), so the CLI keeps its own provider for the model and only its endpoint moves.
   */
  vendorEndpoint?: boolean;
  /** `agent.price`, for a CLI that computes its own cost from a price in its configuration. */
  price?: ModelPrice;
}

/**
 * What a preset sets up around its CLI besides the argv: variables with fixed values (an endpoint,
 * telemetry and update checks off) and files written into the agent's private HOME before it
 * starts (a provider entry, a settings file), each by its path relative to that HOME.
 */
export interface PresetLaunch {
  env: Record<string, string>;
  homeFiles: Record<string, string>;
  /** Files the CLI writes directly in that HOME (names, no directories) that its reader reads once it has exited: a usage report it prints nowhere else. */
  outputFiles?: readonly string[];
}

/**
 * Reads usage from an agent's standard output as it streams. Fed with chunks of stdout only
 * (never stderr, which the agent may interleave mid-line), it keeps what it needs, not the output.
 */
export interface UsageReader {
  push(chunk: string): void;
  /** Fed with chunks of stderr, for a CLI that reports its refusals there. */
  pushError?(chunk: string): void;
  /** Fed, once the CLI has exited, with each of its launch's `outputFiles` that exists (bounded), by its path relative to HOME. */
  pushFile?(path: string, content: string): void;
  /** What the output reported; fields it did not report are null. */
  usage(): AgentUsage;
  /** A cause the harness must act on that the output reported (refused credentials, a usage limit, an overloaded model), or null. */
  failure?(): CliFailure | null;
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
  /**
   * The vendor's API root the CLI calls for `model` when no `agent.baseUrl` is set: the gateway
   * forwards there. Null (or absent) when Genesis cannot know it; then `agent.baseUrl` is
   * required, since the CLI may not reach its model past the gateway with the real key.
   */
  defaultUpstream?(model: string | undefined): string | null;
  /** What to set when `defaultUpstream` is null, besides `agent.baseUrl`. */
  readonly upstreamHint?: string;
  argv(options: PresetOptions): string[];
  /** Variables and HOME files the CLI reads its endpoint and settings from. @default none */
  launch?(options: PresetOptions): PresetLaunch;
  usageReader(): UsageReader;
}
