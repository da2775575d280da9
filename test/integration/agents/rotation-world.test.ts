import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect } from 'vitest';
import { runEmbedded } from '../../../src/compose/embedded-run.js';
import { readAcceptedHistory } from '../../../src/world/history/accepted-history.js';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { itWith } from '../../helpers/services.js';
import { BAD_A, baseManifest, GOOD_A, makeWorld } from '../../helpers/world-fixture.js';

const STANDIN_BIN = join(import.meta.dirname, '..', '..', 'fixtures', 'agents', 'bin');
const TASK_A = { id: 'a', title: 'module a', paths: ['src/a.js'], check: 'node --test test/a.test.js' };

let saved: { PATH?: string; GENESIS_STANDIN_PLAN?: string } = {};
beforeEach(() => {
  saved = { PATH: process.env.PATH, GENESIS_STANDIN_PLAN: process.env.GENESIS_STANDIN_PLAN };
  process.env.PATH = `${STANDIN_BIN}:${process.env.PATH}`;
});
afterEach(() => {
  process.env.PATH = saved.PATH;
  if (saved.GENESIS_STANDIN_PLAN === undefined) delete process.env.GENESIS_STANDIN_PLAN;
  else process.env.GENESIS_STANDIN_PLAN = saved.GENESIS_STANDIN_PLAN;
});

describe('when a task is retried with agent.rotation', () => {
  itWith('bwrap')('runs the next agent of the rotation on the next attempt, in its bwrap sandbox, and the ledger names each', async () => {
    // Claude Code (the stand-in) gets the task wrong; Codex gets it right.
    process.env.GENESIS_STANDIN_PLAN = JSON.stringify({ claude: { write: { 'src/a.js': BAD_A } }, codex: { write: { 'src/a.js': GOOD_A } } });
    const manifest = baseManifest({
      tasks: [TASK_A],
      parallelism: 1,
      agent: {
        kind: 'command',
        preset: 'claude-code',
        sandbox: 'bwrap',
        env: ['GENESIS_STANDIN_PLAN'],
        timeoutSec: 60,
        rotation: [{}, { preset: 'codex', model: 'gpt-4.1' }],
      },
    });
    const f = await makeWorld({ sandbox: 'bwrap', manifest, recording: {} });

    const summary = await runEmbedded({ world: f.world, sandbox: f.sandbox });

    expect(summary.stop.kind).toBe('done');
    const episodes = await new GitLedger(f.world.path).readAll();
    expect(episodes.map((e) => [e.attempt, e.agent, e.outcome])).toEqual([
      [1, 'claude-code', 'rejected'],
      [2, 'codex:gpt-4.1', 'accepted'],
    ]);
    // Each stand-in CLI called no model: the gateway measured nothing; its own report is kept beside that.
    expect(episodes[0]!.usage).toEqual({ inputTokens: 0, outputTokens: 0, cachedTokens: 0, costUsd: 0 });
    expect(episodes[0]!.usageReported).toEqual({ inputTokens: 11358, outputTokens: 234, cachedTokens: 7890, costUsd: 0.0421 });
    expect(episodes[1]!.usageReported).toEqual({ inputTokens: 24763, outputTokens: 122, cachedTokens: 24448, costUsd: 0.01383 });
    const [head] = await readAcceptedHistory(f.world.path, 'main');
    expect(head!.agent).toBe('codex:gpt-4.1');
  });

  itWith('bwrap')('opens the circuit when a preset binary is missing, after one episode', async () => {
    const manifest = baseManifest({
      tasks: [TASK_A],
      parallelism: 1,
      agent: { kind: 'command', preset: 'opencode', model: 'anthropic/claude-sonnet-4-5', timeoutSec: 60 },
    });
    const f = await makeWorld({ sandbox: 'bwrap', manifest, recording: {} });
    process.env.PATH = saved.PATH ?? '/usr/bin:/bin';

    const summary = await runEmbedded({ world: f.world, sandbox: f.sandbox });

    expect(summary.stop).toMatchObject({ kind: 'circuit-open', reason: 'agent-not-found', message: expect.stringContaining('"opencode" was not found') });
    expect(summary.episodes).toBe(1);
  });
});
