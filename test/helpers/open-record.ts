import type { EpisodeJob } from '../../src/episode/episode-job.js';
import { openEpisodeRecord, type EpisodeRecord } from '../../src/ledger/episode-record.js';

/** The record the scheduler writes when it starts an episode, before its job goes out. */
export function openRecord(job: EpisodeJob): EpisodeRecord {
  return openEpisodeRecord({ id: job.episodeId, world: job.world, task: job.task, attempt: job.attempt, base: job.base, agent: 'script', worker: 'test' });
}
