import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { itWith } from '../../helpers/services.js';
import { attackRoot, honestTask, runAttackedWorld, type AttackedWorld } from './adversarial-world.js';

/**
 * Agents that start processes meant to outlive them. The agent contract: "The agent's whole
 * process group is killed at the timeout and when the agent exits, so nothing it started outlives
 * the episode." Each variant's daemons sleep for lengths of their own (none: 601…, bwrap: 611…),
 * so a survivor is found on the host by its command line. The agent script lives in the world,
 * so a sandboxed agent can read it.
 */
const agentScript = (base: number) => `#!/bin/sh
case "$GENESIS_TASK_ID" in
honest) printf "export const v = 'honest';\\n" > src/honest.js ;;
daemon-in-group)
  sh -c 'exec sleep ${base + 1}' >/dev/null 2>&1 </dev/null &
  sleep 0.3 ;;
daemon-new-session)
  setsid sh -c 'exec sleep ${base + 2}' >/dev/null 2>&1 </dev/null &
  sleep 0.3 ;;
daemon-holding-output)
  # Keeps the agent's stdout open for 12 s; bounded, so a run that waits for it still ends.
  setsid sh -c 'exec sleep 12.${base}' &
  sleep 0.3 ;;
esac
`;

/** Host processes whose command line holds `pattern`. */
function hostProcesses(pattern: string): string[] {
  try {
    return execFileSync('pgrep', ['-af', pattern], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .filter((l) => !l.includes('pgrep'));
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

function killAll(pattern: string): void {
  for (const line of hostProcesses(pattern)) process.kill(Number(line.split(' ')[0]), 'SIGKILL');
}

for (const [agentSandbox, base] of [
  ['none', 600],
  ['bwrap', 610],
] as const) {
  describe(`agents that leave processes behind (agent.sandbox: ${agentSandbox})`, () => {
    let w: AttackedWorld;
    beforeAll(async () => {
      const dirs = await attackRoot();
      const honest = honestTask('honest');
      const manifest = {
        name: `daemon-attacks-${agentSandbox}`,
        goal: { outcome: 'the honest module exists' },
        verify: { sandbox: 'bwrap', test: 'node --test test/base.test.js', timeoutSec: 30 },
        protected: ['test/**', 'world.yaml', '.genesis/**'],
        agent: { kind: 'command', command: ['sh', '.genesis/agent.sh'], timeoutSec: 4, sandbox: agentSandbox },
        retry: { maxAttempts: 1 },
        parallelism: 4,
        tasks: [honest.task, ...['in-group', 'new-session', 'holding-output'].map((p) => ({ id: `daemon-${p}`, title: p, paths: [`src/${p}.js`] }))],
      };
      w = await runAttackedWorld({ root: dirs.root, manifest, files: { ...honest.files, '.genesis/agent.sh': agentScript(base) }, sandbox: 'bwrap' });
    }, 120_000);
    afterAll(async () => {
      // Whatever survived is ours to end: it must not outlive the test either.
      for (const n of [base + 1, base + 2]) killAll(`sleep ${n}`);
      killAll(`sleep 12.${base}`);
      await w?.dispose();
    });

    itWith('bwrap')('do not stop the run: it ends normally and the honest task lands', () => {
      expect(w.summary.stop.kind).toBe('blocked');
      expect(w.history.map((c) => c.task)).toEqual(['honest', null]);
    });

    itWith('bwrap')('lose a background process that stayed in their process group when they exit', () => {
      expect(w.episodeOf('daemon-in-group')).toMatchObject({ outcome: 'failed', reason: 'empty-change' });
      expect(hostProcesses(`sleep ${base + 1}`)).toEqual([]);
    });

    itWith('bwrap')('lose a daemon that started a session of its own (setsid) when they exit', () => {
      expect(w.episodeOf('daemon-new-session')).toMatchObject({ outcome: 'failed' });
      expect(hostProcesses(`sleep ${base + 2}`), 'a daemon outlived its episode').toEqual([]);
    });

    itWith('bwrap')('end their episode when they exit, even if a daemon holds their output open', () => {
      const e = w.episodeOf('daemon-holding-output');
      // The agent exits after 0.3 s; its daemon would keep stdout open for 12 s.
      expect(e.reason, `the episode waited for the daemon: agent phase ${e.phases.agent} ms`).toBe('empty-change');
      expect(e.phases.agent).toBeLessThan(4_000);
    });
  });
}
