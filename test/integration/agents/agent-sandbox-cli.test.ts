import { describe, expect } from 'vitest';
import { readAcceptedHistory } from '../../../src/world/accepted-history.js';
import { startCli } from '../../helpers/cli-process.js';
import { itWith } from '../../helpers/services.js';
import { baseManifest, makeWorld } from '../../helpers/world-fixture.js';

/** A world whose command agent writes module a, run once by `genesis run`. */
async function runOnce(agent: Record<string, unknown>): Promise<{ code: number | null; stderr: string; landed: Array<string | null> }> {
  const manifest = baseManifest({
    goal: { outcome: 'module a exists', stop: { maxEpisodes: 1 } },
    parallelism: 1,
    agent: { kind: 'command', command: ['sh', '-c', "printf \"export const a = () => 'a';\\n\" > src/a.js"], timeoutSec: 30, ...agent },
  });
  const f = await makeWorld({ sandbox: 'bwrap', manifest, recording: {} });
  const run = startCli(['run', '--world', f.world.path, '--json']);
  const code = await run.exited;
  return { code, stderr: run.stderr(), landed: (await readAcceptedHistory(f.world.path, 'main')).map((c) => c.task) };
}

describe('genesis run and the agent sandbox', () => {
  itWith('bwrap')('warns when world.yaml says agent.sandbox: none, and says why it matters', async () => {
    const { stderr, landed } = await runOnce({ sandbox: 'none' });
    expect(landed).toEqual(['a', null]);
    expect(stderr).toContain('warning: agent.sandbox is "none": agents run on this machine as your user');
  });

  itWith('bwrap')('runs a world that names no agent sandbox confined, without that warning', async () => {
    const { stderr, landed } = await runOnce({});
    expect(landed).toEqual(['a', null]);
    expect(stderr).not.toContain('agent.sandbox is "none"');
    expect(stderr).not.toMatch(/^warning: agent/m);
  });
});
