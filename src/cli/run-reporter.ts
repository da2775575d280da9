import { withCliName } from './invocation.js';
import type { RunEvent, RunSummary } from '../schedule/run/ports/events.js';
import type { StopReason } from '../schedule/scheduler.js';
import { describeWorldHold } from '../schedule/run/carry-out/world-hold.js';

const time = () => new Date().toISOString().slice(11, 19);

/** One plain line per event: readable on a terminal and in a CI log alike. */
export function formatRunEvent(event: RunEvent): string | null {
  switch (event.type) {
    case 'start':
      return `${time()} world ${event.world} at ${event.head.slice(0, 12)}: ${event.done}/${event.tasks} tasks done; sandbox ${event.sandbox}, agent ${event.agent}, parallelism ${event.parallelism}${event.recovered ? `; closed ${event.recovered} episodes left running by an earlier run` : ''}`;
    case 'episode-start':
      return `${time()} ▶ ${event.task} attempt ${event.attempt}  (episode ${event.id})`;
    case 'episode-phase':
    case 'integration':
    case 'wait':
      return null;
    case 'episode-end': {
      const mark = event.outcome === 'accepted' ? '✓' : event.outcome === 'abandoned' || event.outcome === 'outrun' ? '–' : '✗';
      const what =
        event.outcome === 'accepted'
          ? `accepted as ${event.commit!.slice(0, 12)}${event.reason === 'replayed' ? ' (replayed on a newer head)' : ''}`
          : `${event.outcome}: ${event.reason}: ${event.message ?? ''}`;
      return `${time()} ${mark} ${event.task} attempt ${event.attempt} ${what}  [${(event.durationMs / 1000).toFixed(1)}s]`;
    }
    case 'task-blocked':
      return `${time()} ■ ${event.task} is blocked after ${event.failures} failed attempt(s); ${withCliName(`genesis task retry ${event.task}`)} tries it again`;
    case 'evidence':
      return `${time()} evidence "${event.command}" on ${event.commit.slice(0, 12)}: ${event.passed ? 'passes' : 'not yet'}`;
    case 'foreign-move':
      return `${time()} ! the accepted branch was moved outside Genesis to ${event.commit.slice(0, 12)}; put back, the commit is kept at ${event.quarantine}. To change the world by hand, land the change with ${withCliName('genesis amend')} (see ${withCliName('genesis amend --help')}), which verifies it`;
    case 'lease-wait':
      return `${time()} … ${event.task} waits: its paths are leased by a holder outside this run; trying again in ${Math.max(0, (event.untilMs - Date.now()) / 1000).toFixed(1)}s`;
    case 'hold':
      return `${time()} ⏸ the world is ${describeWorldHold(event)}`;
    case 'steering': {
      const what = { amend: 'an amendment', 'add-task': 'a new task', reopen: 'a reopening' }[event.kind];
      if (event.state === 'taken')
        return `${time()} ⇢ took ${what} from ${event.by ?? 'a person'} (request ${event.id}); it lands between two landings once verified`;
      return event.commit
        ? `${time()} ✓ ${what} landed as ${event.commit.slice(0, 12)} (request ${event.id}); the run goes on with the new plan`
        : `${time()} ✗ request ${event.id} did not land: ${event.message ?? 'refused'}`;
    }
    case 'episode-holder':
      return event.worker === null
        ? `${time()} ! worker ${event.was} was lost while running ${event.task} (episode ${event.id}): no heartbeat; its job goes to another worker once the queue finds it stalled`
        : `${time()} ↻ ${event.task} (episode ${event.id}) was taken again by worker ${event.worker}${event.was ? ` after ${event.was}` : ''}`;
    case 'progress':
      return `${time()}   tasks ${event.done}/${event.tasks} done · accepted ${event.accepted} · rejected ${event.rejected} · failed ${event.failed} · running: ${event.running.join(', ') || '-'}`;
    case 'stop':
      return null;
  }
}

export function describeStop(stop: StopReason): string {
  switch (stop.kind) {
    case 'done':
      return 'stopped: all tasks are done';
    case 'evidence':
      return stop.pending?.length
        ? `stopped: the goal's evidence passes (${stop.command}); not run because of it: ${stop.pending.join(', ')}. To run them anyway: genesis run --past-evidence`
        : `stopped: the goal's evidence passes (${stop.command})`;
    case 'budget':
      return `stopped: budget ${stop.budget} spent (${stop.used} of ${stop.limit}); lift it with genesis budget lift --reason "…" (or raise goal.stop.${stop.budget} in world.yaml) to go on`;
    case 'interrupted':
      return 'stopped by the user; run again to resume';
    case 'awaiting-review':
      return withCliName(
        `stopped: ${stop.episodes.map((e) => `${e.task} (episode ${e.id})`).join(', ')} passed the gate and wait for review; decide with genesis review approve|reject <episode> (or the dashboard), then run again`,
      );
    case 'circuit-open':
      return `stopped: every episode would fail the same way (${stop.reason}: ${stop.message}); no new episodes were started. Fix it, then run again`;
    case 'blocked': {
      const lines = ['stopped: the remaining tasks are blocked'];
      for (const b of stop.blocked) {
        const why =
          b.reason === 'broken-base'
            ? 'found the accepted head failing its own gate (a broken base)'
            : b.repeated
              ? `failed the same way twice in a row (signature ${b.repeated})`
              : 'used its attempts';
        lines.push(`  ${b.task}: ${why}; last: ${b.reason}: ${b.message ?? ''}`);
      }
      for (const w of stop.waiting)
        lines.push(w.on === 'unschedulable' ? `  ${w.task}: cannot be scheduled` : `  ${w.task}: waits for ${w.on}, which is blocked`);
      lines.push(
        withCliName(
          `  next: read the failed attempts (${readFailuresCommands(stop.blocked).join(', ')}, genesis show <id>), fix what failed (genesis amend changes tests, tasks and world.yaml), then genesis task retry <task> and run again`,
        ),
      );
      return lines.join('\n');
    }
  }
}

/**
 * The lists that hold the blocked tasks' last failures, by the outcome they ended with (a rejected
 * gate and a failed agent are separate lists), and by task when only one is blocked.
 */
function readFailuresCommands(blocked: Array<{ task: string; outcome?: string | null }>): string[] {
  const task = blocked.length === 1 ? ` --task ${blocked[0]!.task}` : '';
  const outcomes = [...new Set(blocked.map((b) => b.outcome).filter((o): o is string => !!o))];
  if (outcomes.length === 0) return [`genesis episodes${task}`];
  return outcomes.map((o) => `genesis episodes${task} --outcome ${o}`);
}

export function formatSummary(summary: RunSummary): string {
  return `${describeStop(summary.stop)}\n${summary.episodes} episodes this run: ${summary.accepted} accepted, ${summary.rejected} rejected by the gate, ${summary.failed} failed, ${summary.abandoned} abandoned${summary.outrun > 0 ? `, ${summary.outrun} outrun in races` : ''}; head ${summary.head.slice(0, 12)}; ${(summary.durationMs / 1000).toFixed(1)}s`;
}
