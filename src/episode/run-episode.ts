import type { EpisodeJob, EpisodeResult } from './episode-job.js';
import { runAgent } from './steps/agent.js';
import { collectChange, setAside } from './steps/collect.js';
import { gateChange } from './steps/gate.js';
import { prepareEpisode } from './steps/prepare.js';
import { recordEpisode } from './steps/record.js';
import { timed, type EpisodeDeps } from './steps/state.js';
import { createWorkspace, removeWorkspace } from './workspace.js';

/**
 * One episode end to end on a worker: prepare (record, manifest, prompt), a fresh workspace at the
 * base commit, the agent, the change collected as a candidate, the gate, the record. The result says
 * whether the gate passed it at its base; the integrator decides whether it lands. The workspace is
 * gone afterwards whatever happened.
 */
export async function runEpisode(job: EpisodeJob, deps: EpisodeDeps): Promise<EpisodeResult> {
  const episode = await prepareEpisode(job, deps);
  const ws = await timed(episode, 'workspace', () => createWorkspace(deps.world, job.episodeId, job.base));
  try {
    const agent = await runAgent(episode, ws);
    const change = await collectChange(episode, ws, agent);
    const gate = await gateChange(episode, ws, change, agent);
    setAside(episode, ws, change);
    return await recordEpisode(episode, agent, change, gate);
  } finally {
    await (episode.removing ?? removeWorkspace(ws));
  }
}
