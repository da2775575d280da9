import { execFileSync } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import type { AgentRunInput } from '../../../src/agents/agent.js';
import { CommandAgent } from '../../../src/agents/command/command-agent.js';
import { createAgentSandbox } from '../../../src/sandbox/create-agent-sandbox.js';
import { itWith } from '../../helpers/services.js';
import { tempDir } from '../../helpers/temp-dir.js';

/** A workspace as an episode has it (a shared clone of a bare world), and an agent script kept outside it. */
async function setUp(): Promise<{ run: AgentRunInput; script: string }> {
  const root = await tempDir('genesis-agent-program-');
  const source = join(root, 'source');
  const world = join(root, 'w.world');
  await mkdir(source);
  execFileSync('git', ['init', '--quiet', source]);
  execFileSync('git', ['-C', source, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '--quiet', '-m', 'first', '--allow-empty']);
  execFileSync('git', ['clone', '--quiet', '--bare', source, world]);
  const episodeDir = join(world, 'genesis', 'episodes', 'e1');
  await mkdir(join(episodeDir, 'home'), { recursive: true });
  const workspace = join(episodeDir, 'ws');
  execFileSync('git', ['clone', '--quiet', '--shared', world, workspace]);
  const promptFile = join(episodeDir, 'prompt.md');
  await writeFile(promptFile, 'do task convert\n');
  // Where a person keeps their own agent: beside the world, not in it.
  const script = join(root, 'me', 'agents', 'my-agent.sh');
  await mkdir(join(root, 'me', 'agents'), { recursive: true });
  await writeFile(script, 'echo ran > made-by-agent.txt\necho "thinking..." >&2\necho "no idea how to do task convert" >&2\nexit 3\n');
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', GENESIS_EPISODE_ID: 'e1', HOME: join(episodeDir, 'home') };
  return { run: { workspace, promptFile, prompt: 'do task convert\n', env, timeoutMs: 60_000, taskId: 't', attempt: 1 }, script };
}

describe('a command agent whose program is a file named by absolute path', () => {
  for (const kind of ['bwrap', 'docker'] as const) {
    itWith(kind)(
      `runs it under ${kind}, and gives back the last lines of its stderr`,
      async () => {
        const sandbox = await createAgentSandbox({ kind, image: 'genesis/node:20', network: 'genesis-agents' });
        const { run, script } = await setUp();
        const result = await new CommandAgent(['bash', script], { sandbox }).run(run);
        expect(result.exitCode, result.log).toBe(3);
        expect(await readFile(join(run.workspace, 'made-by-agent.txt'), 'utf8')).toBe('ran\n');
        expect(result.stderrTail).toBe('thinking... | no idea how to do task convert');
      },
      120_000,
    );
  }

  itWith('bwrap')('sees only that file of its directory, read-only', async () => {
    const sandbox = await createAgentSandbox({ kind: 'bwrap', image: 'genesis/node:20', network: 'genesis-agents' });
    const { run, script } = await setUp();
    await writeFile(join(script, '..', 'secret.txt'), 'not for the agent\n');
    await writeFile(script, `ls "$(dirname "$0")" > seen.txt; echo changed >> "$0" 2>/dev/null && echo writable >> seen.txt; exit 0\n`);
    const result = await new CommandAgent(['bash', script], { sandbox }).run(run);
    expect(result.exitCode, result.log).toBe(0);
    expect(await readFile(join(run.workspace, 'seen.txt'), 'utf8')).toBe('my-agent.sh\n');
  });
});
