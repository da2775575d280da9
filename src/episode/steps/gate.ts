import type { CandidateVerdict } from '../../gate/verify-candidate.js';
import type { GateRecord } from '../../ledger/episode-record.js';
import { verifyCandidate } from '../../gate/verify-candidate.js';
import { targetOnTip, type GateTarget } from '../gate-on-tip.js';
import type { Workspace } from '../workspace.js';
import type { AgentStep } from './agent.js';
import { setAside, type CollectedChange } from './collect.js';
import { recordedUsage } from './record.js';
import { timed, type Episode } from './state.js';

/** The gate's word on the change, and the tip it judged it on (null: its base). */
export interface GateStep {
  verdict: CandidateVerdict | null;
  gated: GateTarget | null;
  /**
   * The gate failed on a place rebuilt under it (a change ahead failed there): its verdict judged a
   * tip that will not land, and the change goes to the integration queue, whose verification on its
   * new place is its gate.
   */
  handedOver?: boolean;
}

/**
 * Gates the change: on its place in the integration queue when it gets one, else on its base. A
 * change the agent failed to make, or one over the size limits, is not gated.
 */
export async function gateChange(episode: Episode, ws: Workspace, change: CollectedChange, agent: AgentStep): Promise<GateStep> {
  const { job, deps } = episode;
  const { failure, tree, candidate } = change;
  if (failure || change.oversize || !tree) return { verdict: failure ? null : change.oversize, gated: null };
  const costUsd = recordedUsage(agent.run.usage, episode.record.usage, episode.manifest.agent.limits).usage?.costUsd ?? null;
  let gated = candidate
    ? await targetOnTip(deps.world, deps.reserveTip, { episodeId: job.episodeId, task: job.task, candidate, base: job.base, costUsd })
    : null;
  setAside(episode, ws, change);
  // A gate on a speculative tip is stopped when its place moves: the tip it judges will never land.
  const watch = gated?.speculative && deps.watchPlace ? deps.watchPlace({ episodeId: job.episodeId, commit: gated.commit }) : null;
  let verdict = await timed(episode, 'gate', () => gateOn(episode, change, gated, watch?.signal)).finally(() => watch?.release());
  // A failure on a tip that holds changes this one did not start from is not yet this change's
  // fault: a change ahead (perhaps not judged yet) may have caused it, by failing its own check,
  // eating the gate's time or breaking the tip outright. As a merge queue charges a failure only
  // once everything ahead passed, the run's queue says what it comes to (PlaceAfterFailure):
  // - the change's own, when the tip was the accepted head (only landed changes, each judged
  //   already) or every change ahead has passed on it: that tip is what lands ahead of the change,
  //   and a gate on its base joined behind them would find the failure again, for two more gates;
  // - the queue's to judge, when the place was rebuilt under the gate (a change ahead failed): the
  //   queue verifies the change on its new place anyway, so a gate on the base would be a third
  //   gate for one change, and would hold the episode's slot while the verification runs;
  // A change ahead still being judged is waited for (it ends within its gate's time, and waiting
  // costs no CPU, where a gate on the base would cost a whole gate and still be followed by the
  // queue's verification if the one ahead fails). Else (a review or a race that needs a verdict
  // now, no queue in this process, a wait past its bound) the change is judged again on its own
  // base, as if it had no place yet; a change that fails there too fails on its own.
  const after =
    gated?.speculative && !verdict.ok && deps.placeAfterFailure ? await deps.placeAfterFailure({ episodeId: job.episodeId, commit: gated.commit }) : null;
  if (after === 'queue') return { verdict, gated, handedOver: true };
  if (gated && !verdict.ok && gated.onto !== job.base && gated.speculative !== false && after !== 'own') {
    const onTip = { head: gated.onto, verdict };
    gated = null;
    const onBase = await timed(episode, 'gate-on-base', () => gateOn(episode, change, null));
    // Both gates are evidence (the tip's may have installed the dependency set the base's then found ready),
    // and both cost: the record lists the tip's steps ahead of the base's.
    const log = bothGateLogs(onTip, { head: job.base, verdict: onBase });
    verdict = onBase.ok
      ? { ...onBase, gate: withTipSteps(onTip.verdict, onBase.gate), log }
      : { ...onBase, gate: onBase.gate && withTipSteps(onTip.verdict, onBase.gate), log };
  }
  return { verdict, gated };
}

async function gateOn(episode: Episode, change: CollectedChange, target: GateTarget | null, stop?: AbortSignal): Promise<CandidateVerdict> {
  const { job, manifest, task, deps } = episode;
  const { world } = deps;
  const { baseTree, tree } = change;
  const on = target ? { head: target.onto, manifest: await world.manifestAt(target.onto), tree: target.tree, from: await world.treeOf(target.onto) } : null;
  const gateTask = on?.manifest.tasks.find((t) => t.id === task.id) ?? task;
  // A tip that is still the base (nothing landed while the agent worked) has the base's done tasks, read at prepare.
  const doneOn = on && on.head !== job.base ? await world.doneTasks(manifest.branch, on.head) : episode.done;
  return verifyCandidate({
    world,
    sandbox: deps.sandbox,
    ...(stop ? { stop } : {}),
    head: on?.head ?? job.base,
    headManifest: on?.manifest ?? manifest,
    fromTree: on?.from ?? baseTree,
    candidateTree: on?.tree ?? tree!,
    task: gateTask,
    doneTasks: doneOn,
    name: job.episodeId,
    baseTree: on?.from ?? baseTree,
    // The tip's own gate (of the change ahead) is likely still running: its baseline is awaited, not learned again.
    ...(on && target?.speculative ? { awaitHeadBaselineMs: on.manifest.verify.timeoutSec * 1000 } : {}),
    ...(on ? { sourceChange: { fromTree: baseTree, tree: tree! } } : {}),
    ...episode.waits,
  });
}

/** The gate on the change's own base, its steps after those the speculative tip ran (each saying so). */
function withTipSteps(tip: CandidateVerdict, base: GateRecord): GateRecord {
  if (!tip.gate) return base;
  // Named from where they ran first: a step's own name (check:a) stays the base gate's, whose verdict this is.
  const onTip = tip.gate.steps.map((s) => ({ ...s, name: `on the tip: ${s.name}`, why: `${s.why ?? 'the change'}, on the speculative tip` }));
  return { ...base, steps: [...onTip, ...base.steps] };
}

/** The log of a change gated on a speculative tip, failed there, and judged again on its own base: both gates, each headed by where it ran. */
function bothGateLogs(tip: { head: string; verdict: CandidateVerdict }, base: { head: string; verdict: CandidateVerdict }): string {
  const heading = (what: string, g: { head: string; verdict: CandidateVerdict }) =>
    `=== gate on ${what} ${g.head.slice(0, 12)}: ${g.verdict.ok ? 'passed' : `failed (${g.verdict.reason})`} ===\n`;
  return `${heading('the speculative tip', tip)}${tip.verdict.log}\n${heading("the change's own base", base)}${base.verdict.log}`;
}
