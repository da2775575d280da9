import { createAgentSandbox } from '../../sandbox/create-agent-sandbox.js';
import { agentEndpoints } from '../../sandbox/egress/endpoints.js';
import type { AgentConfig } from '../../manifest/agent-config.js';
import { sharedModelGateway } from '../../channel/shared-gateway.js';
import { modelRouteOf, routeLimits, sandboxEndpoints } from '../model-route.js';
import { priceOf } from '../usage/prices.js';
import { OpenAIAgent } from './openai-agent.js';
import { PROGRAM_ENV } from './program/program-result.js';

/**
 * The built-in `openai` agent from its configuration: its program in the agent sandbox, which
 * reaches the model of agent.baseUrl through the model gateway, holding a stand-in for the key
 * agent.apiKeyEnv names, as every CLI agent does.
 */
export async function createOpenAIAgent(config: AgentConfig, defaultImage: string): Promise<OpenAIAgent> {
  const sandboxKind = config.sandbox === 'auto' ? 'bwrap' : config.sandbox;
  const route = modelRouteOf(
    {
      baseUrl: config.baseUrl,
      variables: [],
      apiKeyEnv: config.apiKeyEnv,
      keyVariable: PROGRAM_ENV.apiKey,
      sandbox: sandboxKind,
      hostNetwork: typeof config.network !== 'string' && 'mode' in config.network,
    },
    sharedModelGateway(),
    routeLimits(config),
  );
  const endpoints = sandboxEndpoints(route, agentEndpoints(config));
  const sandbox = await createAgentSandbox({ kind: config.sandbox, image: config.image ?? defaultImage, network: config.network, endpoints });
  return new OpenAIAgent({
    baseUrl: config.baseUrl!,
    model: config.model!,
    ...(config.apiKeyEnv ? { apiKeyEnv: config.apiKeyEnv } : {}),
    maxTurns: config.maxTurns,
    ...(config.maxTokens ? { maxTokens: config.maxTokens } : {}),
    requestTimeoutMs: config.requestTimeoutSec * 1000,
    commandTimeoutMs: config.commandTimeoutSec * 1000,
    commandOutputBytes: config.commandOutputKb * 1024,
    price: priceOf(config.model, config.price),
    sandbox,
    ...(route ? { route } : endpoints.length > 0 ? { endpoints } : {}),
    ...(config.limits.diskMb === undefined ? {} : { diskMb: config.limits.diskMb }),
  });
}
