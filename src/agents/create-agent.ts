import { GenesisError } from '../errors/genesis-error.js';
import type { WorldManifest } from '../manifest/schema.js';
import type { WorldRepo } from '../world/world-repo.js';
import type { Agent } from './agent.js';
import { createOpenAIAgent } from './openai/create-openai-agent.js';
import { createCommandAgent } from './command/create-command-agent.js';
import type { AgentConfig } from '../manifest/agent-config.js';
import { createRotatingAgent } from './rotation.js';
import { parseRecording, ScriptAgent } from './script/script-agent.js';
import { SimAgent } from './sim/sim-agent.js';

/**
 * The agent a manifest asks for; with `agent.rotation`, one agent per entry, picked per attempt.
 * A script recording is read from the accepted head, like every rule.
 */
export async function createAgent(manifest: WorldManifest, world: WorldRepo, head: string): Promise<Agent> {
  const create = (config: AgentConfig) => createConfiguredAgent(config, manifest, world, head);
  if (manifest.agent.rotation.length > 0) return createRotatingAgent(manifest.agent, create);
  return create(manifest.agent);
}

async function createConfiguredAgent(config: AgentConfig, manifest: WorldManifest, world: WorldRepo, head: string): Promise<Agent> {
  if (config.kind === 'command') return createCommandAgent(config);
  if (config.kind === 'openai') return createOpenAIAgent(config, manifest.verify.image);
  if (config.kind === 'sim') return new SimAgent(config.sim!, config.sim!.refusals);
  const path = config.script!;
  const text = await world.readFile(head, path);
  if (text === null) {
    throw new GenesisError('recording-missing', `the script agent's recording ${path} is not in the accepted head`, {
      hint: `add ${path} to the world (and list it under protected:), or point agent.script at it`,
    });
  }
  return new ScriptAgent(parseRecording(text, path));
}
