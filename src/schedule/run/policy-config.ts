import { liftedBudgets } from '../../ledger/budget-lifts.js';
import type { Ledger } from '../../ledger/ledger.js';
import type { WorldManifest } from '../../manifest/schema.js';
import type { initialPolicyState } from '../run-policy.js';
import type { RunOptions } from './ports/state.js';

/** The policy's configuration: the manifest's, with the budgets in force and the run's own flags. */
export async function policyConfig(
  options: RunOptions,
  manifest: WorldManifest,
  ledger: Ledger,
  recorded: number,
): Promise<Parameters<typeof initialPolicyState>[0]['config']> {
  const lifts = await ledger.budgetLifts();
  return {
    parallelism: manifest.parallelism,
    maxAttempts: manifest.retry.maxAttempts,
    blockOnRepeat: manifest.retry.blockOnRepeat,
    budgets: runBudgets(liftedBudgets(manifest.goal.stop, lifts), recorded, options.maxEpisodes),
    distributed: options.distributed !== undefined,
    pastEvidence: options.pastEvidence ?? false,
    ratchet: manifest.verify.mode === 'ratchet',
    reviewAll: manifest.review === 'all',
    race: manifest.agent.race,
    stopOnWin: manifest.race.stopOnWin,
  };
}

/** The budgets in force (the manifest's, as lifted), with a run's own episode limit counted on top of the records already in the ledger. */
function runBudgets(budgets: WorldManifest['goal']['stop'], recorded: number, maxEpisodes: number | undefined): WorldManifest['goal']['stop'] {
  if (maxEpisodes === undefined) return budgets;
  return { ...budgets, maxEpisodes: Math.min(budgets.maxEpisodes ?? Infinity, recorded + maxEpisodes) };
}
