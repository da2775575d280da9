import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { GenesisError } from '../errors/genesis-error.js';
import type { WorldManifest } from '../manifest/schema.js';
import { genesisStateDir } from '../world/genesis-state-dir.js';

type Stop = WorldManifest['goal']['stop'];
/** The budgets a lift can raise (each by an amount, added to what world.yaml says). */
export const LIFTABLE = ['maxEpisodes', 'maxHours', 'maxCostUsd', 'maxTokens'] as const;
export type Liftable = (typeof LIFTABLE)[number];

/** A person's decision to let a world spend more than world.yaml allows, and why. */
export interface BudgetLift {
  at: string;
  by: string;
  reason: string;
  raise: Partial<Record<Liftable, number>>;
}

/**
 * The lifts of a world's budgets, oldest first. Kept beside the ledger's own files in the world's
 * git directory (one JSON line each, appended), never in world.yaml, so lifting a stop needs no
 * amendment of the manifest, and never where an agent's workspace reaches.
 */
export async function budgetLiftsFile(repo: string): Promise<string> {
  return join(await genesisStateDir(repo), 'budget-lifts.jsonl');
}

export async function readBudgetLifts(repo: string): Promise<BudgetLift[]> {
  const text = await readFile(await budgetLiftsFile(repo), 'utf8').catch(() => '');
  const lifts: BudgetLift[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      const v = JSON.parse(line) as BudgetLift;
      if (typeof v.reason === 'string' && v.raise && typeof v.raise === 'object') lifts.push(v);
    } catch {
      // A torn last line: the lift was not recorded.
    }
  }
  return lifts;
}

/** Records a lift; refuses one without a reason or without a positive amount. */
export async function addBudgetLift(repo: string, lift: Omit<BudgetLift, 'at'>, now = new Date()): Promise<BudgetLift> {
  if (lift.reason.trim() === '')
    throw new GenesisError('invalid-option', 'a budget lift needs a reason', { hint: 'say why with --reason "…"; it is shown with the budgets' });
  const amounts = Object.entries(lift.raise);
  if (amounts.length === 0 || amounts.some(([, n]) => !(typeof n === 'number' && Number.isFinite(n) && n > 0)))
    throw new GenesisError('invalid-option', 'a budget lift raises at least one budget by a positive amount', {
      hint: 'e.g. genesis budget lift --cost-usd 20 --reason "…"',
    });
  const recorded: BudgetLift = { at: now.toISOString(), by: lift.by, reason: lift.reason.trim(), raise: lift.raise };
  const file = await budgetLiftsFile(repo);
  await mkdir(join(file, '..'), { recursive: true });
  await appendFile(file, `${JSON.stringify(recorded)}\n`);
  return recorded;
}

/** The budgets in force: world.yaml's, each raised by every lift of it (a budget world.yaml does not set stays unset). Pure. */
export function liftedBudgets(stop: Stop, lifts: readonly BudgetLift[]): Stop {
  const out: Stop = { ...stop };
  for (const key of LIFTABLE) {
    const base = stop[key];
    if (base === undefined) continue;
    const raise = lifts.reduce((sum, l) => sum + (l.raise[key] ?? 0), 0);
    out[key] = base + raise;
  }
  return out;
}
