import { randomBytes } from 'node:crypto';
import { describe, expect } from 'vitest';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { installAgentCli } from '../../helpers/agent-clis.js';
import { startCli } from '../../helpers/cli-process.js';
import { startAnthropicServer } from '../../helpers/model-servers/anthropic-messages.js';
import { itWith } from '../../helpers/services.js';
import { baseManifest, GOOD_A, makeWorld } from '../../helpers/world-fixture.js';

/**
 * A whole `genesis run`, as a person starts it, with the real Claude Code against a local model
 * server on this host that is stopped as the run starts and brought back seconds later (vLLM or
 * Ollama restarted overnight): the run waits for it, says so, and lands the task on its first attempt.
 */
describe('genesis run with a local model server that is stopped and restarted', () => {
  itWith('bwrap')(
    'waits for the model, says so on its output, and lands the task uncharged once the server is back',
    async () => {
      const cli = await installAgentCli('claude-code');
      const server = await startAnthropicServer();
      server.file.path = 'src/a.js';
      server.file.content = GOOD_A;
      const f = await makeWorld({
        sandbox: 'bwrap',
        manifest: baseManifest({
          agent: { kind: 'command', preset: 'claude-code', baseUrl: server.origin, model: 'claude-sonnet-4-5', timeoutSec: 300 },
          retry: { maxAttempts: 1 },
          parallelism: 1,
          tasks: [{ id: 'a', title: 'module a', paths: ['src/a.js'], check: 'node --test test/a.test.js' }],
        }),
        recording: {},
      });
      const restarted = server.restart(12_000);
      try {
        const run = startCli(['run', '--world', f.world.path, '--sandbox', 'bwrap'], {
          PATH: `${cli.binDir}:${process.env.PATH}`,
          ANTHROPIC_API_KEY: `sk-scripted-${randomBytes(4).toString('hex')}`,
        });
        const held = await run.waitFor(/⏸ the world is held until/, 120_000);
        expect(held).toContain(`the model endpoint ${server.origin} does not accept connections`);
        await restarted;

        expect(await run.exited, run.stderr()).toBe(0);
        expect(run.lines.join('\n')).toMatch(/stopped: all tasks are done/);
        expect(await f.world.readFile('main', 'src/a.js')).toBe(GOOD_A);
        const episodes = await new GitLedger(f.world.path).readAll();
        const waited = episodes.filter((e) => e.reason === 'model-unreachable');
        expect(waited.length).toBeGreaterThan(0);
        expect(waited.every((e) => e.outcome === 'abandoned' && e.attempt === 1)).toBe(true);
        expect(episodes.at(-1)).toMatchObject({ outcome: 'accepted', attempt: 1, usageSource: 'wire' });
      } finally {
        await restarted.catch(() => undefined);
        await server.close();
      }
    },
    300_000,
  );
});
