import { showControls } from '../../../ledger/terminal-text.js';

/** What `genesis worker` prints: its own lines (ready, stopping, orphans-killed) and its episodes' events. */
export type WorkerLine = { type: string } & Record<string, unknown>;

const str = (v: unknown): string => (v === null || v === undefined ? '' : String(v));

/** One event as a sentence, without the time and the label. */
function describe(e: WorkerLine): string {
  const episode = `episode ${str(e.episodeId)} (task ${str(e.task)})`;
  switch (e.type) {
    case 'ready': {
      const sandboxes = Array.isArray(e.sandboxes) && e.sandboxes.length > 0 ? e.sandboxes.join(', ') : 'none';
      return `ready: ${str(e.concurrency)} at a time from ${str(e.redis)}; gate sandboxes ${sandboxes}, agent sandbox ${str(e.agentSandbox) || 'none'} (checked in ${str(e.preflightMs)} ms)`;
    }
    case 'orphans-killed':
      return `killed ${str(e.processes)} agent processes a worker that died left behind`;
    case 'stopping':
      return `stopping: ${str(e.how)}`;
    case 'takeover':
      return e.from
        ? `takes over ${episode} from worker ${str(e.from)}, which stopped, stalled or handed it back`
        : `takes over ${episode}: its job ran before on a worker that stopped or stalled`;
    case 'start':
      return `▶ ${episode}`;
    case 'phase':
      return `  ${episode}: ${str(e.phase)}`;
    case 'end':
      return `${e.verdict === 'passed' ? '✓' : '✗'} ${episode}: ${str(e.verdict)}`;
    case 'tip-asked':
      return `  ${episode}: asks for a place in the integration queue`;
    case 'tip-answered':
      return `  ${episode}: ${e.verdict === 'placed' ? 'placed in the integration queue' : 'no place in the integration queue; gates on its own base'}`;
    case 'gate-on-tip':
      return `  ${episode}: gates on its place in the integration queue`;
    case 'waiting':
      return `  task ${str(e.task)} waits for ${str(e.what)} (${Math.round(Number(e.ms) / 1000)}s so far)`;
    case 'verify-start':
      return `▶ verification of ${episode}`;
    case 'verify-end':
      return `${e.verdict === 'passed' ? '✓' : '✗'} verification of ${episode}: ${str(e.verdict)}`;
    case 'calibrate-start':
      return `▶ calibration gate ${str(e.episodeId)} of world ${str(e.task)}`;
    case 'calibrate-end':
      // A rejection here is a measurement (a false rejection or a caught mutant), not a failure of this worker.
      return `■ calibration gate ${str(e.episodeId)} of world ${str(e.task)}: ${e.verdict === 'passed' ? 'accepted' : `rejected (${str(e.verdict)})`}`;
    default:
      return Object.values(e).map(str).join(' ');
  }
}

/**
 * A line of the worker's output, labelled with the worker's id so that the lines of several
 * workers (a compose log, one terminal) can be told apart: JSON with `worker` and `at`, or
 * `HH:MM:SS [id] sentence`.
 */
export function formatWorkerLine(workerId: string, event: WorkerLine, json: boolean, now = new Date()): string {
  if (json) return `${JSON.stringify({ ...event, worker: event.worker ?? workerId, at: now.getTime() })}\n`;
  return `${now.toISOString().slice(11, 19)} [${workerId}] ${showControls(describe(event))}\n`;
}
