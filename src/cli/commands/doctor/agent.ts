import { resolveOnPath } from '../../../sandbox/agent/find-binary.js';
import { PRESETS } from '../../../agents/command/presets/index.js';
import type { WorldManifest } from '../../../manifest/schema.js';
import type { DoctorCheck } from './checks.js';
import { checkPresetUpstreams } from '../../../agents/command/preset-upstream.js';
import { GenesisError } from '../../../errors/genesis-error.js';

/** Whether every preset of the world can be put behind the model gateway; null when it is (genesis run then says where each goes). */
export function checkModelRoad(manifest: WorldManifest): DoctorCheck | null {
  try {
    checkPresetUpstreams(manifest);
    return null;
  } catch (error) {
    if (!(error instanceof GenesisError)) throw error;
    return { name: 'model', status: 'fail', detail: `${error.message}; genesis run and genesis init refuse it (exit 1)`, hint: error.hint ?? null };
  }
}

/**
 * Whether the world's agent program exists here, found as `genesis run` finds it: on PATH, or for
 * a path with a slash, in the workspace (the accepted tree) or on the host. A docker agent sandbox
 * brings its own programs in its image, so there the check is left to the run. Null when the
 * world's agent is not a command. `inWorld` says whether the world's tree holds a file: the
 * accepted tree for doctor, the directory init is given for init.
 */
export async function checkAgentBinary(inWorld: (path: string) => Promise<boolean>, manifest: WorldManifest): Promise<DoctorCheck | null> {
  const agent = manifest.agent;
  if (agent.kind !== 'command') return null;
  const preset = agent.preset ? PRESETS[agent.preset] : null;
  const program = agent.command?.[0] ?? preset?.argv({ model: agent.model, args: [], sandboxed: agent.sandbox !== 'none' })[0];
  if (!program) return null;
  if (agent.sandbox === 'docker') return { name: 'agent', status: 'ok', detail: `${program}: looked for in the agent image when the run starts`, hint: null };
  const inTree = program.includes('/') && !program.startsWith('/') && (await inWorld(program.replace(/^\.\//, '')));
  const found = inTree ? program : await resolveOnPath(program, process.env.PATH, process.cwd());
  if (found) return { name: 'agent', status: 'ok', detail: `${program} is ${inTree ? 'in the world' : found}`, hint: null };
  const install = preset ? ` (${preset.install})` : '';
  return {
    name: 'agent',
    status: 'fail',
    detail: `the agent command "${program}" was not found on PATH; genesis run would stop at once (agent-not-found, exit 6)`,
    hint: `install it${install}, or fix agent.command in world.yaml`,
  };
}
