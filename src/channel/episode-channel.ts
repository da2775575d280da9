import { Conversation } from './conversation.js';
import type { WireTokens } from './wire-usage.js';

/** Prices of one model, US dollars per million tokens (the agents' price table passes them in). */
export interface ChannelPrice {
  inputPerMTok: number;
  outputPerMTok: number;
  cachedInputPerMTok?: number;
}

/**
 * What happened on an episode's road to its model that the run must act on, read at the gateway:
 * the same for every CLI, whatever it prints.
 */
export type ChannelFailure =
  | { kind: 'auth'; message: string }
  | { kind: 'usage-limit'; message: string; resetAt: number | null }
  | { kind: 'overloaded'; message: string }
  | { kind: 'stalled'; message: string }
  | { kind: 'unreachable'; message: string }
  | { kind: 'stream-cut'; message: string }
  | { kind: 'budget'; message: string /** The world's budget, not the episode's own. */; world: boolean };

/** What the episode's channel knows once it is over. */
export interface ChannelReport {
  /** Model calls forwarded (each attempt of a CLI's retry counts). */
  calls: number;
  /** Tokens summed over every call whose response named them; null when no call did. */
  tokens: WireTokens | null;
  /** Dollars at the price of each call's model; null when a call with tokens had no price. */
  costUsd: number | null;
  /** Calls that spent tokens at a model with no price (so costUsd is null). */
  unpriced: string[];
  /** Answered calls whose answer named no tokens (a server that reports none): the total is then unknown. */
  unmeasured: number;
  /** The first failure that ends the episode, else the last one seen (a cut stream the CLI outlived). */
  failure: ChannelFailure | null;
  /** The conversation, bounded (JSON). */
  conversation: Conversation;
}

export interface EpisodeChannelSpec {
  /** How messages name the agent. */
  label: string;
  /** The real endpoint: the vendor's API root, or agent.baseUrl. */
  upstream: URL;
  /** Stand-in token → the real credential it stands for (null: the variable is not set on this host). */
  credentials: ReadonlyMap<string, string | null>;
  /** No byte from the model for this long ends the request and the episode. */
  stallMs: number;
  /** Input + output tokens the episode may spend; the next request past it is refused. */
  maxTokens?: number;
  /** Dollars the episode may spend, likewise. */
  maxCostUsd?: number;
  /** What is left of the world's budgets: refused past it too, as the world's. */
  worldTokens?: number;
  worldCostUsd?: number;
  /** What is left of the task's own budget over its attempts: refused past it, as the episode's own. */
  taskTokens?: number;
  taskCostUsd?: number;
  priceOf(model: string | null): ChannelPrice | null;
  /** Called once, at the first failure that should end the episode now. */
  onFailure(failure: ChannelFailure): void;
  /** A name for the credential's usage-limit holds (a digest of it, never the key). */
  credentialId: string | null;
}

/** Overloaded answers a CLI may retry by itself before the episode is ended and tried again later. */
export const OVERLOADS_BEFORE_ENDING = 3;

/** Failures that end the episode at once: waiting longer inside it could only burn its time. */
const ENDING: ReadonlySet<ChannelFailure['kind']> = new Set(['auth', 'usage-limit', 'stalled', 'unreachable', 'budget']);

/** The accounting of one episode's model calls at the gateway. */
export class EpisodeChannel {
  readonly conversation = new Conversation();
  private tokens: WireTokens | null = null;
  private cost = 0;
  private readonly unpriced = new Set<string>();
  private calls = 0;
  private unmeasured = 0;
  private overloads = 0;
  private failure: ChannelFailure | null = null;
  private ended = false;
  closed = false;

  constructor(readonly spec: EpisodeChannelSpec) {}

  /** Tokens and dollars so far, streamed calls included up to their latest event. */
  spent(live: WireTokens | null = null, liveModel: string | null = null): { tokens: number; costUsd: number } {
    const t = this.tokens;
    const tokens = (t ? t.inputTokens + t.outputTokens : 0) + (live ? live.inputTokens + live.outputTokens : 0);
    return { tokens, costUsd: this.cost + (live ? (costOf(live, this.spec.priceOf(liveModel)) ?? 0) : 0) };
  }

  /** Why the next request is refused for a spent budget, or null. */
  overBudget(live: WireTokens | null = null, liveModel: string | null = null): { message: string; world: boolean } | null {
    const { tokens, costUsd } = this.spent(live, liveModel);
    const { maxTokens, maxCostUsd, worldTokens, worldCostUsd, taskTokens, taskCostUsd } = this.spec;
    if (worldTokens !== undefined && tokens >= worldTokens)
      return { message: `the world's token budget has ${worldTokens} left and the episode spent ${tokens}`, world: true };
    if (worldCostUsd !== undefined && costUsd >= worldCostUsd)
      return { message: `the world's budget in dollars has $${worldCostUsd.toFixed(4)} left and the episode spent $${costUsd.toFixed(4)}`, world: true };
    if (taskTokens !== undefined && tokens >= taskTokens)
      return { message: `the task's token budget (agent.maxTaskTokens) had ${taskTokens} left and the episode spent ${tokens}`, world: false };
    if (taskCostUsd !== undefined && costUsd >= taskCostUsd)
      return {
        message: `the task's budget in dollars (agent.maxTaskCostUsd) had $${taskCostUsd.toFixed(4)} left and the episode spent $${costUsd.toFixed(4)}`,
        world: false,
      };
    if (maxTokens !== undefined && tokens >= maxTokens)
      return { message: `the episode spent ${tokens} tokens of its budget of ${maxTokens} (agent.maxTokens)`, world: false };
    if (maxCostUsd !== undefined && costUsd >= maxCostUsd)
      return { message: `the episode spent $${costUsd.toFixed(4)} of its budget of $${maxCostUsd} (agent.maxCostUsd)`, world: false };
    return null;
  }

  /** A finished call: its tokens counted, its cost priced by its own model. */
  settle(model: string | null, tokens: WireTokens | null, status: number | null, spends: boolean): number | null {
    this.calls++;
    if (status !== null && status !== 529 && status !== 503) this.overloads = 0;
    if (!tokens) {
      if (spends && status !== null && status >= 200 && status < 300) this.unmeasured++;
      return null;
    }
    this.tokens = this.tokens
      ? {
          inputTokens: this.tokens.inputTokens + tokens.inputTokens,
          outputTokens: this.tokens.outputTokens + tokens.outputTokens,
          cachedTokens: this.tokens.cachedTokens + tokens.cachedTokens,
          reasoningTokens: this.tokens.reasoningTokens + tokens.reasoningTokens,
        }
      : tokens;
    const cost = costOf(tokens, this.spec.priceOf(model));
    if (cost === null && tokens.inputTokens + tokens.outputTokens > 0) this.unpriced.add(model ?? '(no model named)');
    this.cost += cost ?? 0;
    return cost;
  }

  /** An overloaded answer: the episode ends at the third in a row. */
  overloaded(message: string): void {
    if (++this.overloads >= OVERLOADS_BEFORE_ENDING) this.fail({ kind: 'overloaded', message });
  }

  /** A failure seen: the first ending one ends the episode; others are kept for the record. */
  fail(failure: ChannelFailure): void {
    if (this.ended) return;
    this.failure = failure;
    if (ENDING.has(failure.kind) || failure.kind === 'overloaded') {
      this.ended = true;
      this.spec.onFailure(failure);
    }
  }

  report(): ChannelReport {
    return {
      calls: this.calls,
      tokens: this.tokens,
      costUsd: this.unpriced.size > 0 ? null : this.tokens ? round(this.cost) : 0,
      unpriced: [...this.unpriced],
      unmeasured: this.unmeasured,
      failure: this.failure,
      conversation: this.conversation,
    };
  }
}

function costOf(tokens: WireTokens, price: ChannelPrice | null): number | null {
  if (!price) return null;
  const cached = Math.min(tokens.cachedTokens, tokens.inputTokens);
  return (
    ((tokens.inputTokens - cached) * price.inputPerMTok +
      cached * (price.cachedInputPerMTok ?? price.inputPerMTok) +
      tokens.outputTokens * price.outputPerMTok) /
    1e6
  );
}

const round = (dollars: number) => Math.round(dollars * 1e6) / 1e6;
