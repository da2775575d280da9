import type { NotifyEventName } from '../manifest/notify-config.js';
import type { RunEvent } from '../schedule/run/ports/events.js';
import type { StopReason } from '../schedule/scheduler.js';

/** What a webhook is told: one moment of a world, with enough to act on without opening the dashboard. */
export interface Notification {
  event: NotifyEventName;
  world: string;
  /** When it happened (ISO 8601). */
  at: string;
  /** One line for a person (the Slack payload is this line). */
  text: string;
  task?: string;
  episode?: string;
  attempt?: number;
  /** The accepted commit (accepted), or the candidate waiting for a person (awaiting-review). */
  commit?: string | null;
  reason?: string | null;
  message?: string | null;
  stop?: StopReason;
}

/**
 * The notifications one run event gives: none for most (phases, progress), one or two for the
 * moments a person cares about. Pure: the notifier only stores and delivers what this decides.
 */
export function notificationsOf(event: RunEvent, world: string, now: Date): Notification[] {
  const at = now.toISOString();
  switch (event.type) {
    case 'episode-end': {
      const about = { world, at, task: event.task, episode: event.id, attempt: event.attempt, reason: event.reason, message: event.message };
      const out: Notification[] = [];
      if (event.outcome === 'accepted')
        out.push({
          ...about,
          event: 'accepted',
          commit: event.commit,
          text: `${world}: task ${event.task} accepted as ${short(event.commit)} (attempt ${event.attempt})`,
        });
      else if (event.outcome === 'rejected')
        out.push({
          ...about,
          event: 'rejected',
          text: `${world}: task ${event.task} attempt ${event.attempt} rejected: ${event.reason}${tail(event.message)}`,
        });
      else if (event.outcome === 'awaiting-review')
        out.push({
          ...about,
          event: 'awaiting-review',
          commit: event.commit,
          text: `${world}: task ${event.task} passed its gate and waits for review: genesis review approve|reject ${event.id}`,
        });
      if (event.reason === 'worker-lost')
        out.push({ ...about, event: 'worker-lost', text: `${world}: no worker finished episode ${event.id} of task ${event.task}${tail(event.message)}` });
      return out;
    }
    case 'task-blocked':
      return [
        {
          event: 'blocked',
          world,
          at,
          task: event.task,
          reason: event.reason,
          message: event.message,
          text: `${world}: task ${event.task} is blocked after ${event.failures} failed attempt(s): ${event.reason}${tail(event.message)}`,
        },
      ];
    case 'stop': {
      const stopped: Notification = { event: 'stopped', world, at, stop: event.reason, text: `${world}: the run stopped: ${stopWords(event.reason)}` };
      if (event.reason.kind !== 'budget') return [stopped];
      const { budget, limit, used } = event.reason;
      return [{ event: 'budget-spent', world, at, stop: event.reason, text: `${world}: budget ${budget} spent (${used} of ${limit})` }, stopped];
    }
    case 'hold':
      // A usage limit, or a model that went away: nothing starts until then, and a person may want to know why.
      return [
        {
          event: 'held',
          world,
          at,
          message: event.message,
          text: `${world}: no episode starts before ${new Date(event.untilMs).toISOString()}: ${event.message.split('\n')[0]!.slice(0, 300)}`,
        },
      ];
    default:
      return [];
  }
}

function stopWords(stop: StopReason): string {
  switch (stop.kind) {
    case 'done':
      return 'every task is done';
    case 'evidence':
      return `the goal's evidence (${stop.command}) passes`;
    case 'blocked':
      return `nothing left can run (blocked: ${stop.blocked.map((b) => b.task).join(', ') || '-'})`;
    case 'budget':
      return `budget ${stop.budget} spent`;
    case 'interrupted':
      return 'interrupted';
    case 'awaiting-review':
      return `what is left waits for review (${stop.episodes.map((e) => e.task).join(', ')})`;
    case 'circuit-open':
      return `${stop.reason}: ${stop.message}`;
  }
}

const short = (commit: string | null) => (commit ?? '').slice(0, 12);
const tail = (message: string | null) => (message ? `: ${message.split('\n')[0]!.slice(0, 200)}` : '');
