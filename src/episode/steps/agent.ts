import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AgentRunResult } from '../../agents/agent.js';
import { agentForAttempt } from '../../agents/rotation.js';
import { linkWorkspaceDeps, type WorkspaceDeps } from '../../deps/workspace-deps.js';
import type { EpisodeJob } from '../episode-job.js';
import { borrowedObjectStores, type Workspace } from '../workspace.js';
import { timed, type Episode } from './state.js';

/** What the agent did: who it was (with agent.rotation, the one this attempt's turn names), its run, and the dependency set its workspace got. */
export interface AgentStep {
  label: string;
  run: AgentRunResult;
  wsDeps: WorkspaceDeps | null;
}

/** Links the base's dependency set into the workspace, writes the prompt there and runs the agent on it. */
export async function runAgent(episode: Episode, ws: Workspace): Promise<AgentStep> {
  const { job, manifest, prompt, deps } = episode;
  // The base's dependency set, the one its gate mounts, so the agent's own test runs work at once.
  const wsDeps = await timed(episode, 'deps', () =>
    linkWorkspaceDeps({ repo: deps.world.path, dir: ws.dir, base: job.base, manifest, sandbox: deps.sandbox, ...episode.waits }),
  );
  const promptFile = join(ws.episodeDir, 'prompt.md');
  await writeFile(promptFile, prompt);
  const agent = agentForAttempt(deps.agent, job.attempt);
  // Known from the world the workspace was cloned from, before the agent starts: nothing it writes decides a sandbox's mounts.
  const objectStores = await borrowedObjectStores(deps.world);
  const run = await timed(episode, 'agent', () =>
    agent.run({
      workspace: ws.dir,
      promptFile,
      prompt,
      env: agentEnv(manifest.agent.env, job, manifest.name, promptFile),
      timeoutMs: manifest.agent.timeoutSec * 1000,
      taskId: job.task,
      attempt: job.attempt,
      signal: deps.signal,
      readOnly: [...objectStores, ...(wsDeps?.readOnly ?? [])],
      ...(job.spendable ? { spendable: job.spendable } : {}),
    }),
  );
  return { label: agent.label, run, wsDeps };
}

function agentEnv(allowed: readonly string[], job: EpisodeJob, worldName: string, promptFile: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ['PATH', 'LANG', 'LC_ALL', 'TERM', 'TZ', ...allowed]) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  env.HOME ??= join(promptFile, '..', 'home');
  return {
    ...env,
    GENESIS_PROMPT_FILE: promptFile,
    GENESIS_TASK_ID: job.task,
    GENESIS_ATTEMPT: String(job.attempt),
    GENESIS_EPISODE_ID: job.episodeId,
    GENESIS_WORLD_NAME: worldName,
  };
}
