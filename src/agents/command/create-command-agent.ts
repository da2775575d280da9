import { createAgentSandbox } from '../../sandbox/create-agent-sandbox.js';
import { CommandAgent } from './command-agent.js';
import type { AgentConfig } from '../../manifest/agent-config.js';
import { priceOf } from '../usage/prices.js';
import { PRESETS } from './presets/index.js';
import { agentEndpoints } from '../../sandbox/egress/endpoints.js';
import { DEFAULT_AGENT_IMAGE } from '../../sandbox/agent/docker/docker-agent-sandbox.js';
import { sharedModelGateway } from '../../channel/shared-gateway.js';
import type { ModelGateway } from '../../channel/model-gateway.js';
import { modelRouteOf, routeLimits, sandboxEndpoints } from '../model-route.js';
import { presetUpstream, unroutedPreset } from './preset-upstream.js';

/**
 * A `command` agent from its configuration: a preset's argv, variables, HOME files and output
 * reader (an explicit `agent.command` replaces the preset's argv and keeps the rest), in the agent
 * sandbox the manifest asks for, with its model reached through the model gateway: the preset is
 * given the gateway's URL (in the variable or file its CLI reads), and the agent holds stand-ins
 * for its keys. Without `agent.baseUrl`, a preset's CLI keeps its vendor's endpoint behind the
 * gateway; a preset whose endpoint Genesis cannot know is refused (agent-endpoint-unknown). Only
 * an `agent.command` of no preset without `baseUrl`, whose model Genesis cannot know, reaches it
 * directly, and `genesis run` says so.
 */
export async function createCommandAgent(
  config: AgentConfig,
  defaultImage = DEFAULT_AGENT_IMAGE,
  gateway: ModelGateway = sharedModelGateway(),
): Promise<CommandAgent> {
  const preset = config.preset ? PRESETS[config.preset] : null;
  const unrouted = unroutedPreset(config);
  if (unrouted) throw unrouted;
  const hostNetwork = typeof config.network !== 'string' && 'mode' in config.network;
  const sandboxKind = config.sandbox === 'auto' ? 'bwrap' : config.sandbox;
  const route = modelRouteOf(
    {
      baseUrl: config.baseUrl,
      defaultUpstream: presetUpstream(config) ?? undefined,
      variables: [...(preset?.env ?? []), ...config.env],
      apiKeyEnv: config.apiKeyEnv,
      sandbox: sandboxKind,
      hostNetwork,
    },
    gateway,
    routeLimits(config),
  );
  // Through the gateway the agent reaches exactly its listener (bridged into its namespace); without it, the baseUrl itself.
  const endpoints = sandboxEndpoints(route, agentEndpoints(config));
  const sandbox = await createAgentSandbox({ kind: config.sandbox, image: config.image ?? defaultImage, network: config.network, endpoints });
  const args = config.args ?? [];
  const options = {
    args,
    sandboxed: sandbox.kind !== 'none',
    ...(config.model ? { model: config.model } : {}),
    ...(config.baseUrl || route ? { baseUrl: config.baseUrl ?? route!.upstream.href } : {}),
    ...(route && !config.baseUrl ? { vendorEndpoint: true } : {}),
    ...(config.price ? { price: config.price } : {}),
  };
  const argv = config.command ? [...config.command, ...args] : preset!.argv(options);
  const launch = preset?.launch?.(options);
  return new CommandAgent(argv, {
    ...(preset ? { label: `${preset.name}${config.model ? `:${config.model}` : ''}`, usageReader: preset.usageReader, install: preset.install } : {}),
    passEnv: [...(preset?.env ?? []), ...config.env],
    sandbox,
    price: priceOf(config.model, config.price),
    ...(config.limits.diskMb === undefined ? {} : { diskMb: config.limits.diskMb }),
    ...(config.homeFiles.length > 0 ? { homeFiles: config.homeFiles } : {}),
    ...(endpoints.length > 0 && !route ? { endpoints } : {}),
    ...(launch ? { launch } : {}),
    ...(route
      ? {
          route,
          launchFor: (modelUrl: string) => preset?.launch?.({ ...options, baseUrl: modelUrl }) ?? { env: {}, homeFiles: {} },
        }
      : {}),
  });
}
