import { GenesisError } from '../../errors/genesis-error.js';
import type { EpisodeRecord } from '../../ledger/episode-record.js';
import type { EpisodeJob } from '../episode-job.js';
import { composePrompt } from '../prompt.js';
import type { Episode, EpisodeDeps } from './state.js';

/**
 * The bookkeeping before the workspace: the episode's record, the manifest and task at its base,
 * the earlier attempts and the last failed gate's log, a person's retry note, the tasks done at the
 * base, and the prompt from all of them.
 */
export async function prepareEpisode(job: EpisodeJob, deps: EpisodeDeps): Promise<Episode> {
  const { world, ledger } = deps;
  const preparing = performance.now();
  const record = await ledger.read(job.episodeId);
  if (!record) throw new GenesisError('episode-unknown', `episode ${job.episodeId} has no ledger record`, { hint: 'episodes are created by genesis run' });
  const manifest = await world.manifestAt(job.base);
  const task = manifest.tasks.find((t) => t.id === job.task);
  if (!task) throw new GenesisError('task-unknown', `task ${job.task} is not in world.yaml at ${job.base.slice(0, 12)}`);
  // The scheduler names the earlier attempts; reading the whole ledger per episode grows with the world.
  const earlier = job.earlier
    ? (await Promise.all(job.earlier.map((id) => ledger.read(id)))).filter((e): e is EpisodeRecord => e !== null)
    : (await ledger.readAll()).filter((e) => e.task === job.task && e.id !== job.episodeId);
  const lastFailed = earlier.filter((e) => e.outcome === 'rejected' || e.outcome === 'failed').at(-1);
  const lastGateLog = lastFailed ? (await ledger.readArtifacts(lastFailed.id)).gateLog : undefined;
  const retryNote = (await world.taskRetries()).filter((r) => r.task === job.task).at(-1)?.note ?? null;
  // Checks of the tasks done at the base, not at today's head: the candidate's tree is base + change.
  // The prompt names the same gate plan the gate runs, so the agent is judged only by what it was told.
  const done = await world.doneTasks(manifest.branch, job.base);
  const prompt = composePrompt({ manifest, task, attempt: job.round ?? job.attempt, earlier, lastGateLog, retryNote, doneTasks: done });
  const phases = { prepare: Math.round(performance.now() - preparing) };
  const { onWait } = deps;
  const waits = onWait ? { onWait: (what: string | null) => onWait(job, what) } : {};
  return { job, deps, record, manifest, task, done, prompt, waits, phases, removing: null, diffing: Promise.resolve('') };
}
