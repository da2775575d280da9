import type { TaskSpec } from '../manifest/schema.js';
import type { TaskStatus } from './task-status.js';
import { tasksWaitingOnBlocked } from './task-status.js';

export type StopReason =
  | { kind: 'done' }
  /** `pending`: tasks not done when the evidence passed; they run with `genesis run --past-evidence`. */
  | { kind: 'evidence'; command: string; pending?: string[] }
  | {
      kind: 'blocked';
      blocked: Array<{ task: string; reason: string | null; message: string | null; outcome?: string | null; repeated?: string | null }>;
      waiting: Array<{ task: string; on: string }>;
    }
  | { kind: 'budget'; budget: 'maxEpisodes' | 'maxHours' | 'maxCostUsd' | 'maxTokens'; limit: number; used: number }
  | { kind: 'interrupted' }
  /** Nothing else can go on before a person decides on these changes (genesis review approve|reject); the next run lands or retries them. */
  | { kind: 'awaiting-review'; episodes: Array<{ id: string; task: string }> }
  /** An agent failure no retry can cure (a missing binary, bad credentials): no new episodes. */
  | { kind: 'circuit-open'; reason: string; message: string };

/**
 * Tasks that may start now, in manifest order: pending, every dependency done, and accepted by
 * `eligible` (the run loop passes its cooldown rule; path overlap is then settled by taking the
 * task's lease, which the in-process and Redis lease stores both refuse on overlap).
 */
export function pickReadyTasks(
  tasks: readonly TaskSpec[],
  statuses: ReadonlyMap<string, TaskStatus>,
  slots: number,
  eligible: (task: TaskSpec) => boolean,
): TaskSpec[] {
  const picked: TaskSpec[] = [];
  for (const task of tasks) {
    if (picked.length >= slots) break;
    if (statuses.get(task.id)?.state !== 'pending') continue;
    if (!task.dependsOn.every((dep) => statuses.get(dep)?.state === 'done')) continue;
    if (eligible(task)) picked.push(task);
  }
  return picked;
}

export interface Budgets {
  maxEpisodes?: number;
  maxHours?: number;
  maxCostUsd?: number;
  maxTokens?: number;
}

/** What has been spent; cost and tokens count only what agents reported (unknown is not zero, it is absent). */
export interface Spent {
  costUsd?: number;
  tokens?: number;
}

/** Whether one more episode may start without any budget being crossed. */
export function budgetStop(budgets: Budgets, startedEpisodes: number, hoursUsed: number, spent: Spent = {}): StopReason | null {
  if (budgets.maxEpisodes !== undefined && startedEpisodes >= budgets.maxEpisodes) {
    return { kind: 'budget', budget: 'maxEpisodes', limit: budgets.maxEpisodes, used: startedEpisodes };
  }
  if (budgets.maxHours !== undefined && hoursUsed >= budgets.maxHours) {
    return { kind: 'budget', budget: 'maxHours', limit: budgets.maxHours, used: Math.round(hoursUsed * 100) / 100 };
  }
  if (budgets.maxCostUsd !== undefined && (spent.costUsd ?? 0) >= budgets.maxCostUsd) {
    return { kind: 'budget', budget: 'maxCostUsd', limit: budgets.maxCostUsd, used: Math.round((spent.costUsd ?? 0) * 10000) / 10000 };
  }
  if (budgets.maxTokens !== undefined && (spent.tokens ?? 0) >= budgets.maxTokens) {
    return { kind: 'budget', budget: 'maxTokens', limit: budgets.maxTokens, used: spent.tokens ?? 0 };
  }
  return null;
}

/** Why the run must stop when nothing is running and nothing can start, or null to go on. */
export function idleStop(tasks: readonly TaskSpec[], statuses: ReadonlyMap<string, TaskStatus>): StopReason | null {
  const all = [...statuses.values()];
  if (all.every((s) => s.state === 'done')) return { kind: 'done' };
  const blocked = all.filter((s) => s.state === 'blocked');
  const waiting = tasksWaitingOnBlocked(tasks, statuses);
  const stuck = all.filter((s) => s.state === 'pending' && !waiting.has(s.id));
  if (stuck.length > 0 || all.some((s) => s.state === 'running')) return null;
  return {
    kind: 'blocked',
    blocked: blocked.map((s) => ({
      task: s.id,
      reason: s.lastReason,
      message: s.lastMessage,
      ...(s.lastOutcome ? { outcome: s.lastOutcome } : {}),
      ...(s.repeated ? { repeated: s.repeated } : {}),
    })),
    waiting: [...waiting].map(([task, on]) => ({ task, on })),
  };
}
