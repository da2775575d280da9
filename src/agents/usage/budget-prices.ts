import { GenesisError } from '../../errors/genesis-error.js';
import type { WorldManifest } from '../../manifest/schema.js';
import { agentConfigForAttempt } from '../../manifest/agent-config.js';
import { priceOf } from './prices.js';

/**
 * A budget in dollars (goal.stop.maxCostUsd, agent.maxCostUsd) needs a price for every model an
 * agent of the world may use: without one, each episode's cost is unknown and the budget would
 * never trip. Refused before anything starts, with the two ways out.
 */
export function checkBudgetPrices(manifest: WorldManifest): void {
  const budget = manifest.goal.stop.maxCostUsd !== undefined ? 'goal.stop.maxCostUsd' : manifest.agent.maxCostUsd !== undefined ? 'agent.maxCostUsd' : null;
  if (!budget) return;
  const entries = Math.max(1, manifest.agent.rotation.length);
  for (let attempt = 1; attempt <= entries; attempt++) {
    const config = agentConfigForAttempt(manifest.agent, attempt);
    if (config.kind !== 'command' && config.kind !== 'openai') continue;
    if (priceOf(config.model, config.price)) continue;
    const which = manifest.agent.rotation.length > 0 ? `agent.rotation[${attempt - 1}]` : 'agent';
    const model = config.model ? `the model ${config.model}` : "the CLI's default model (agent.model is not set)";
    throw new GenesisError('budget-unpriced', `${budget} is set, but Genesis has no price for ${model} of ${which}, so its cost could never be counted`, {
      hint: `add ${which}.price: { inputPerMTok: …, outputPerMTok: … } (US dollars per million tokens), set ${which}.model to a model of the price table (docs/guides/agents-and-presets.md lists it), or budget in tokens with goal.stop.maxTokens`,
    });
  }
}
