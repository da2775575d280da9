import { endpointOfUrl, isLoopbackHost } from '../sandbox/egress/endpoints.js';
import { connectProblem } from './command/endpoint-probe.js';
import type { ChannelFailure, ChannelReport } from '../channel/episode-channel.js';
import { backoffDelay, backoffPolicy } from '../retry/backoff-policy.js';
import type { AgentRunInput, AgentRunResult } from './agent.js';
import { authFailedError, episodeFailureOf } from './failure-classes.js';
import { hostCredentials, type ModelRoute } from './model-route.js';
import { isUnknownUsage, type AgentUsage, type ModelPrice } from './usage/usage.js';

/** How long the world waits for a model it cannot reach: from seconds (a server restarting) to minutes (a night's outage). */
const OUTAGE_WAIT = backoffPolicy({ initialMs: 5_000, maxMs: 5 * 60_000, jitter: 0.2 });

type EpisodeFailure = NonNullable<AgentRunResult['failure']>;

/**
 * Why the agent should not be launched at all: its credential is held by a usage limit another
 * episode met, or its model on this host does not accept connections (then the world waits for it, longer
 * each time in a row, instead of spending an episode's time on a CLI retrying a dead address).
 */
export async function beforeLaunch(route: ModelRoute, spendable: AgentRunInput['spendable']): Promise<EpisodeFailure | null> {
  // A task whose own budget is spent gets no launch: its attempts end at once, alike, and the retry policy blocks it.
  if (spendable?.taskTokens === 0 || spendable?.taskCostUsd === 0) {
    const which = spendable.taskTokens === 0 ? 'token budget (agent.maxTaskTokens)' : 'budget in dollars (agent.maxTaskCostUsd)';
    return { reason: 'agent-token-budget', message: `the task's ${which} is spent over its earlier attempts: no agent was started` };
  }
  const held = await route.gateway.heldFor(hostCredentials(route));
  if (held) return episodeFailureOf({ kind: 'usage-limit', message: held.message, resetAt: held.untilMs });
  // A model on this host (Ollama, vLLM, a gateway being restarted) is asked before a CLI is started for nothing; a hosted
  // one is met by the agent's first call, which the gateway reads the same way, without a connect per episode.
  if (!isLoopbackHost(route.upstream.hostname.replace(/^\[(.*)\]$/, '$1'))) return null;
  const problem = await connectProblem(endpointOfUrl(route.upstream.href)!);
  if (problem === null) return null;
  return unreachable(route, `the model endpoint ${route.upstream.origin} does not accept connections (${problem})`);
}

function unreachable(route: ModelRoute, message: string): EpisodeFailure {
  const streak = route.gateway.unreachable(route.upstream.origin);
  const wait = backoffDelay(OUTAGE_WAIT, streak, Math.random()) ?? OUTAGE_WAIT.maxMs;
  return {
    reason: 'model-unreachable',
    message: `${message}; the world waits ${Math.round(wait / 1000)} s for it (time ${streak} in a row) and tries again`,
    holdUntil: Date.now() + wait,
  };
}

/**
 * The episode's result with what the gateway measured: usage from the wire (the CLI's own report
 * kept beside it), and the failure read where it happened, which ends the episode the same way
 * for every CLI. Refused credentials stop the run (the circuit opens), as before.
 */
export function channelResult(
  ran: AgentRunResult,
  report: ChannelReport,
  ended: ChannelFailure | null,
  route: ModelRoute,
  price: ModelPrice | null,
  label: string,
): AgentRunResult {
  const measured = measuredUsage(report, price);
  const reported = ran.usage;
  const failure = ended ? failureOf(ended, route, label) : cutFailure(ran, report);
  const { usage: _cli, ...rest } = ran;
  return {
    ...rest,
    // Ended by the channel, not by a person: not an abort.
    aborted: ended ? false : ran.aborted,
    ...(measured ? { usage: measured } : {}),
    usageSource: 'wire',
    ...(reported && !isUnknownUsage(reported) ? { reportedUsage: reported } : {}),
    modelCalls: report.calls,
    ...(failure ? { failure } : {}),
    transcript: ran.transcript ?? JSON.stringify(report.conversation, null, 1),
  };
}

/** The tokens and dollars of every call; a call whose answer named no tokens makes the total unknown rather than short. */
function measuredUsage(report: ChannelReport, price: ModelPrice | null): AgentUsage | null {
  if (report.calls === 0) return { inputTokens: 0, outputTokens: 0, cachedTokens: 0, costUsd: 0 };
  if (!report.tokens || report.unmeasured > 0) return null;
  const t = report.tokens;
  // Every call priced at its own model; without that, the configured price (agent.price) for all of them.
  const costUsd =
    report.costUsd ??
    (price
      ? round(
          ((t.inputTokens - Math.min(t.cachedTokens, t.inputTokens)) * price.inputPerMTok +
            Math.min(t.cachedTokens, t.inputTokens) * (price.cachedInputPerMTok ?? price.inputPerMTok) +
            t.outputTokens * price.outputPerMTok) /
            1e6,
        )
      : null);
  return { inputTokens: t.inputTokens, outputTokens: t.outputTokens, cachedTokens: t.cachedTokens, costUsd };
}

const round = (dollars: number) => Math.round(dollars * 1e6) / 1e6;

function failureOf(failure: ChannelFailure, route: ModelRoute, label: string): EpisodeFailure {
  switch (failure.kind) {
    case 'auth':
      throw authFailedError(label, failure.message);
    case 'usage-limit':
      return episodeFailureOf({ kind: 'usage-limit', message: failure.message, resetAt: failure.resetAt });
    case 'overloaded':
      return episodeFailureOf({ kind: 'overloaded', message: failure.message });
    case 'stalled':
      return { reason: 'model-stalled', message: failure.message };
    case 'unreachable':
      return unreachable(route, failure.message);
    case 'budget':
      return { reason: failure.world ? 'budget-reached' : 'agent-token-budget', message: `${failure.message}: the gateway refused the next model call` };
    case 'stream-cut':
      return { reason: 'model-stream-cut', message: failure.message };
  }
}

/** A cut stream the agent did not outlive (it failed after it) is the model's failure, not the agent's. */
function cutFailure(ran: AgentRunResult, report: ChannelReport): EpisodeFailure | null {
  if (report.failure?.kind === 'stream-cut' && !ran.aborted && !ran.timedOut && ran.exitCode !== 0) {
    return { reason: 'model-stream-cut', message: `${report.failure.message}; the agent then exited with code ${ran.exitCode}` };
  }
  return ran.failure ?? null;
}
