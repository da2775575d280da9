import { createAgentSandbox } from '../../sandbox/create-agent-sandbox.js';
import { CommandAgent } from './command-agent.js';
import type { AgentConfig } from '../../manifest/agent-config.js';
import { priceOf } from '../usage/prices.js';
import { PRESETS } from './presets/index.js';
import { agentEndpoints } from '../../sandbox/egress/endpoints.js';
import { DEFAULT_AGENT_IMAGE } from '../../sandbox/agent/docker/docker-agent-sandbox.js';

/**
 * A `command` agent from its configuration: a preset's argv, variables, HOME files and output
 * reader (an explicit `agent.command` replaces the preset's argv and keeps the rest), with
 * `agent.baseUrl` and `agent.model` passed the way the preset's CLI reads them, in the agent
 * sandbox the manifest asks for.
 */
export async function createCommandAgent(config: AgentConfig, defaultImage = DEFAULT_AGENT_IMAGE): Promise<CommandAgent> {
  const preset = config.preset ? PRESETS[config.preset] : null;
  const endpoints = agentEndpoints(config);
  const sandbox = await createAgentSandbox({ kind: config.sandbox, image: config.image ?? defaultImage, network: config.network, endpoints });
  const args = config.args ?? [];
  const options = {
    args,
    sandboxed: sandbox.kind !== 'none',
    ...(config.model ? { model: config.model } : {}),
    ...(config.baseUrl ? { baseUrl: config.baseUrl } : {}),
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
    ...(endpoints.length > 0 ? { endpoints } : {}),
    ...(launch ? { launch } : {}),
  });
}
