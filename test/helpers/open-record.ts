import type { EpisodeJob } from '../../src/episode/episode-job.js';
import type { EpisodeRecord } from '../../src/world/episode-record.js';

/** The record the scheduler writes when it starts an episode, before its job goes out. */
export function openRecord(job: EpisodeJob): EpisodeRecord {
  return {
    version: 1,
    id: job.episodeId,
    world: job.world,
    task: job.task,
    attempt: job.attempt,
    agent: 'script',
    base: job.base,
    candidate: null,
    commit: null,
    status: 'running',
    outcome: null,
    reason: null,
    message: null,
    signature: null,
    startedAt: new Date().toISOString(),
    endedAt: null,
    phases: {},
    gate: null,
    changedFiles: [],
    usage: null,
    worker: 'test',
  };
}
