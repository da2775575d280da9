import type { EpisodeResult } from '../episode/episode-job.js';
import type { Integrator } from '../integrate/integrator.js';
import { readAcceptedSince } from '../world/accepted-history.js';
import type { EpisodeRecord } from '../world/episode-record.js';
import type { Ledger } from '../world/ledger.js';
import type { WorldManifest } from '../world/manifest-schema.js';
import type { WorldRepo } from '../world/world-repo.js';

/**
 * Turns a worker's result into the episode's final record, integrating it first when the gate
 * passed it. Safe to call twice for the same result (a durable queue redelivers results after a
 * crash): a record already final is returned as it is, and a change that already landed is found
 * by its Genesis-Episode trailer instead of being integrated again.
 */
export async function finishEpisode(deps: { world: WorldRepo; ledger: Ledger; integrator: Integrator; manifest: WorldManifest }, result: EpisodeResult, fallback: EpisodeRecord | undefined): Promise<EpisodeRecord> {
  const { ledger, manifest } = deps;
  const record = (await ledger.read(result.episodeId)) ?? fallback;
  if (!record) throw new Error(`episode ${result.episodeId} has no ledger record`);
  if (record.status === 'final') return record;
  const endedAt = () => new Date().toISOString();
  if (result.verdict !== 'passed') {
    const final: EpisodeRecord = { ...record, status: 'final', outcome: result.verdict, reason: result.reason, message: result.message, signature: result.signature, endedAt: endedAt() };
    await ledger.write(final);
    return final;
  }
  const landed = (await readAcceptedSince(deps.world.path, manifest.branch, result.base)).find((c) => c.episode === result.episodeId);
  if (landed) {
    const final: EpisodeRecord = { ...record, status: 'final', outcome: 'accepted', commit: landed.commit, endedAt: endedAt() };
    await ledger.write(final);
    return final;
  }
  const t0 = performance.now();
  const task = manifest.tasks.find((t) => t.id === result.task);
  const outcome = await deps.integrator.integrate({ result, title: task?.title ?? result.task, agent: record.agent, verified: record.gate?.summary ?? 'passed', score: record.gate?.score ?? null });
  const phases = { ...record.phases, integrate: Math.round(performance.now() - t0) };
  if (outcome.outcome === 'accepted') {
    const message = outcome.replayed ? `replayed on a newer head and verified again: ${outcome.gate?.summary ?? ''}` : record.message;
    const final: EpisodeRecord = { ...record, status: 'final', outcome: 'accepted', commit: outcome.commit, reason: outcome.replayed ? 'replayed' : null, message, phases, endedAt: endedAt() };
    await ledger.write(final);
    return final;
  }
  // A replay that fails on the new head as it already does without the change is not charged.
  const charged = outcome.reason === 'replay-broken-base' ? 'abandoned' : 'rejected';
  const final: EpisodeRecord = { ...record, status: 'final', outcome: charged, reason: outcome.reason, message: outcome.message, signature: outcome.signature, gate: outcome.gate ?? record.gate, phases, endedAt: endedAt() };
  await ledger.write(final, outcome.gateLog ? { gateLog: outcome.gateLog } : {});
  return final;
}
