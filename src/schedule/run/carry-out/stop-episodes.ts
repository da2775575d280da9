import type { Run } from '../ports/state.js';

/** Tells the episodes to stop, once. In process, closing the queue aborts the agents; their results (abandoned) still arrive through the inbox. */
export async function stopEpisodes(run: Run): Promise<void> {
  if (run.episodesStopped) return;
  run.episodesStopped = true;
  if (!run.distributed) await run.queue.close();
}
