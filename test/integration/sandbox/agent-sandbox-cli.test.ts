import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect } from 'vitest';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { readAcceptedHistory } from '../../../src/world/history/accepted-history.js';
import { startCli } from '../../helpers/cli-process.js';
import { itWith } from '../../helpers/services.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { baseManifest, makeWorld } from '../../helpers/world-fixture.js';

/** A world whose command agent writes module a, run once by `genesis run`. */
async function runOnce(agent: Record<string, unknown>): Promise<{ code: number | null; stderr: string; landed: Array<string | null> }> {
  const manifest = baseManifest({
    goal: { outcome: 'module a exists', stop: { maxEpisodes: 1 } },
    parallelism: 1,
    agent: { kind: 'command', command: ['sh', '-c', 'printf "export const a = () => \'a\';\\n" > src/a.js'], timeoutSec: 30, ...agent },
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

describe("an agent's own program kept outside the world", () => {
  itWith('bwrap')(
    "named by a ~ path, runs confined, and the last lines of its stderr reach the run's line and the next attempt's prompt",
    async () => {
      // Where a person keeps their agent: in their home, beside no world.
      const home = await tempDir('genesis-home-');
      await mkdir(join(home, 'agents'));
      await writeFile(
        join(home, 'agents', 'my-agent.sh'),
        [
          'if grep -q "no idea how to do task a" "$1"; then',
          '  printf "export const a = () => \'a\';\\n" > src/a.js',
          'else',
          '  echo "thinking..." >&2; echo "no idea how to do task a" >&2; exit 3',
          'fi',
          '',
        ].join('\n'),
      );
      const manifest = baseManifest({
        parallelism: 1,
        agent: { kind: 'command', command: ['bash', '~/agents/my-agent.sh', '{promptFile}'], timeoutSec: 30 },
        tasks: [{ id: 'a', title: 'module a', paths: ['src/a.js'], check: 'node --test test/a.test.js' }],
      });
      const f = await makeWorld({ sandbox: 'bwrap', manifest, recording: {} });
      const run = startCli(['run', '--world', f.world.path, '--sandbox', 'bwrap'], { HOME: home });
      expect(await run.exited, run.stderr()).toBe(0);
      expect(run.lines.join('\n')).toMatch(
        /✗ a attempt 1 failed: agent-exit: the agent exited with code 3; its stderr ended: thinking\.\.\. \| no idea how to do task a/,
      );
      const episodes = await new GitLedger(f.world.path).readAll();
      expect(episodes.map((e) => [e.attempt, e.outcome])).toEqual([
        [1, 'failed'],
        [2, 'accepted'],
      ]);
      const prompt = (await new GitLedger(f.world.path).readArtifacts(episodes[1]!.id)).prompt ?? '';
      expect(prompt).toContain('no idea how to do task a');
    },
    120_000,
  );
});

/** Host processes whose command line holds `pattern`. */
function hostProcesses(pattern: string): string[] {
  try {
    return execFileSync('pgrep', ['-af', pattern], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .filter((l) => l && !l.includes('pgrep'));
  } catch {
    return [];
  }
}

describe('a confined agent and a killed orchestrator', () => {
  itWith('bwrap')('dies with genesis run at kill -9, its daemons and its network helper too', async () => {
    const tag = 600 + Math.floor(Math.random() * 300);
    const manifest = baseManifest({
      parallelism: 1,
      agent: { kind: 'command', command: ['sh', '-c', `sleep ${tag}.1 & setsid sleep ${tag}.2 & sleep ${tag}.3`], timeoutSec: 600 },
      tasks: [{ id: 'a', title: 'module a', paths: ['src/a.js'] }],
    });
    const f = await makeWorld({ sandbox: 'bwrap', manifest, recording: {} });
    const run = startCli(['run', '--world', f.world.path]);
    try {
      for (let i = 0; i < 600 && hostProcesses(`^sleep ${tag}\\.3`).length === 0; i++) await sleep(50);
      expect(hostProcesses(`^sleep ${tag}\\.`).length).toBe(3);
      expect(hostProcesses(`slirp4netns.*${f.world.path}`).length + hostProcesses('slirp4netns').length).toBeGreaterThan(0);
      // As root the agent's namespace came from the run's pool: its holder names the run, its slirp4netns the run's fd.
      const pid = run.child.pid!;
      const pooled = () => [...hostProcesses(`genesis-agent-netns-${pid}$`), ...hostProcesses(`slirp4netns.*/proc/${pid}/fd/`)];
      if (process.getuid?.() === 0) expect(pooled().length).toBeGreaterThan(0);
      run.child.kill('SIGKILL');
      await run.exited;
      for (let i = 0; i < 60 && (hostProcesses(`^sleep ${tag}\\.`).length > 0 || pooled().length > 0); i++) await sleep(50);
      expect(hostProcesses(`^sleep ${tag}\\.`)).toEqual([]);
      expect(hostProcesses(`genesis-agent-net.*${f.world.path}`)).toEqual([]);
      expect(pooled()).toEqual([]);
    } finally {
      for (const line of hostProcesses(`^sleep ${tag}\\.`)) {
        try {
          process.kill(Number(line.split(' ')[0]), 'SIGKILL');
        } catch {
          // gone meanwhile
        }
      }
    }
  });
});
