import type { EpisodeRecord, GateRecord } from '../ledger/episode-record.js';

/** An attribute value OpenTelemetry carries. */
export type SpanValue = string | number | boolean;

/** A span to export, planned from a final record: times in ms since the epoch, children inside their parent. */
export interface PlannedSpan {
  name: string;
  startMs: number;
  endMs: number;
  attributes: Record<string, SpanValue>;
  /** The span ended in error (an episode that did not land, a gate step that failed). */
  error: string | null;
  children: PlannedSpan[];
}

/** The GenAI provider names of the agents whose vendor is known (the `gen_ai.provider.name` values). */
const PROVIDERS: Record<string, string> = {
  'claude-code': 'anthropic',
  codex: 'openai',
  openai: 'openai',
  gemini: 'gcp.gemini',
};

/**
 * An episode's trace, from its final record: the episode, then its phases in the order they ran
 * (workspace, the agent as a GenAI `invoke_agent` span with its tokens and cost, collect, the gate
 * with a span per step, the gate on the base when the tip's failed, integration with the
 * verification on the tip when there was one, and the landing). A record keeps each phase's
 * duration, not its start, so phases are laid end to end from the episode's start, and
 * integration and landing end where the episode did. Pure: the adapter exports what it returns.
 */
export function planEpisodeSpans(record: EpisodeRecord): PlannedSpan {
  const start = Date.parse(record.startedAt);
  const end = record.endedAt ? Math.max(start, Date.parse(record.endedAt)) : start;
  const phases = record.phases;
  const children: PlannedSpan[] = [];
  let at = start;
  const next = (name: string, ms: number | undefined, attributes: Record<string, SpanValue> = {}, inner: (from: number) => PlannedSpan[] = () => []) => {
    if (ms === undefined) return;
    const from = Math.min(at, end);
    const to = Math.min(from + ms, end);
    children.push({ name, startMs: from, endMs: to, attributes, error: null, children: inner(from) });
    at = to;
  };
  next('workspace', phases.workspace);
  next(agentSpanName(record.agent), phases.agent, agentAttributes(record));
  next('collect', phases.collect);
  const baseGate = phases['gate-on-base'] !== undefined;
  next('gate', phases.gate, { 'genesis.gate.on': baseGate || record.gatedOn ? 'tip' : 'base' }, (from) => (baseGate ? [] : gateSteps(record.gate, from, end)));
  next('gate-on-base', phases['gate-on-base'], { 'genesis.gate.on': 'base' }, (from) => gateSteps(record.gate, from, end));
  if (phases.integrate !== undefined) {
    const from = Math.max(at, end - phases.integrate);
    const verification = record.verification;
    children.push({
      name: 'integrate',
      startMs: from,
      endMs: end,
      attributes: verification ? { 'genesis.verification.id': verification.id, 'genesis.verification.onto': verification.onto } : {},
      error: null,
      children: verification ? [{ ...gateSpan('verification', verification.gate, from, end), children: gateSteps(verification.gate, from, end) }] : [],
    });
  }
  if (record.outcome === 'accepted' && record.commit) {
    children.push({ name: 'land', startMs: end, endMs: end, attributes: { 'genesis.commit': record.commit }, error: null, children: [] });
  }
  return {
    name: `episode ${record.task}`,
    startMs: start,
    endMs: end,
    attributes: episodeAttributes(record),
    // An outrun racer did nothing wrong: another racer of its task won (genesis.outcome says so).
    error:
      record.outcome === 'accepted' || record.outcome === 'outrun' ? null : `${record.outcome ?? 'unfinished'}${record.reason ? ` (${record.reason})` : ''}`,
    children,
  };
}

function episodeAttributes(r: EpisodeRecord): Record<string, SpanValue> {
  return defined({
    'genesis.world': r.world,
    'genesis.episode.id': r.id,
    'genesis.task': r.task,
    'genesis.attempt': r.attempt,
    'genesis.outcome': r.outcome ?? 'running',
    'genesis.reason': r.reason,
    'genesis.worker': r.worker,
    'genesis.base': r.base,
    'genesis.candidate': r.candidate,
    'genesis.commit': r.commit,
    'genesis.usage.cost_usd': r.usage?.costUsd,
  });
}

/** `invoke_agent <name>`, as the GenAI conventions name an agent's invocation. */
function agentSpanName(label: string): string {
  return `invoke_agent ${label}`;
}

function agentAttributes(r: EpisodeRecord): Record<string, SpanValue> {
  const colon = r.agent.indexOf(':');
  const kind = colon < 0 ? r.agent : r.agent.slice(0, colon);
  const model = colon < 0 ? null : r.agent.slice(colon + 1);
  return defined({
    'gen_ai.operation.name': 'invoke_agent',
    'gen_ai.agent.name': r.agent,
    'gen_ai.agent.id': r.id,
    'gen_ai.conversation.id': r.id,
    'gen_ai.provider.name': PROVIDERS[kind] ?? kind,
    'gen_ai.request.model': model,
    'gen_ai.usage.input_tokens': r.usage?.inputTokens,
    'gen_ai.usage.output_tokens': r.usage?.outputTokens,
    'gen_ai.usage.cache_read.input_tokens': r.usage?.cachedTokens,
    // The conventions have no cost attribute: Genesis's own name, in dollars.
    'genesis.usage.cost_usd': r.usage?.costUsd,
    // wire: measured by the model gateway on every call; agent: as the agent reported it.
    'genesis.usage.source': r.usageSource,
  });
}

function gateSpan(name: string, gate: GateRecord, from: number, end: number): PlannedSpan {
  return {
    name,
    startMs: from,
    endMs: Math.min(from + gate.durationMs, end),
    attributes: defined({ 'genesis.gate.sandbox': gate.sandbox, 'genesis.gate.summary': gate.summary, 'genesis.gate.score': gate.score }),
    error: gate.ok ? null : gate.summary,
    children: [],
  };
}

/** One span per gate step, end to end from the gate's start. Hidden checks keep their name out of the trace too. */
function gateSteps(gate: GateRecord | null, from: number, end: number): PlannedSpan[] {
  let at = from;
  return (gate?.steps ?? []).map((step) => {
    const span: PlannedSpan = {
      name: `gate ${step.hidden ? 'hidden check' : step.name}`,
      startMs: Math.min(at, end),
      endMs: Math.min(at + step.durationMs, end),
      attributes: defined({
        'genesis.gate.step': step.hidden ? 'hidden' : step.name,
        'process.exit.code': step.exitCode,
        'genesis.gate.timed_out': step.timedOut,
        'genesis.gate.oom_killed': step.oomKilled,
        'genesis.tests.passed': step.tests?.passed,
        'genesis.tests.failed': step.tests?.failed,
        'genesis.tests.skipped': step.tests?.skipped,
      }),
      error: step.exitCode === 0 ? null : `exit ${step.exitCode}`,
      children: [],
    };
    at += step.durationMs;
    return span;
  });
}

function defined(values: Record<string, SpanValue | null | undefined>): Record<string, SpanValue> {
  return Object.fromEntries(Object.entries(values).filter((entry): entry is [string, SpanValue] => entry[1] !== null && entry[1] !== undefined));
}
