import { GenesisError } from '../errors.js';
import type { WorldManifest } from '../world/manifest-schema.js';
import type { WorldRepo } from '../world/world-repo.js';
import type { Agent } from './agent.js';
import { CommandAgent } from './command-agent.js';
import { parseRecording, ScriptAgent } from './script-agent.js';
import { SimAgent } from './sim-agent.js';

/** The agent a manifest asks for. A script recording is read from the accepted head, like every rule. */
export async function createAgent(manifest: WorldManifest, world: WorldRepo, head: string): Promise<Agent> {
  if (manifest.agent.kind === 'command') return new CommandAgent(manifest.agent.command!);
  if (manifest.agent.kind === 'sim') return new SimAgent(manifest.agent.sim!);
  const path = manifest.agent.script!;
  const text = await world.readFile(head, path);
  if (text === null) {
    throw new GenesisError('recording-missing', `the script agent's recording ${path} is not in the accepted head`, {
      hint: `add ${path} to the world (and list it under protected:), or point agent.script at it`,
    });
  }
  return new ScriptAgent(parseRecording(text, path));
}
