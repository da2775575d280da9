import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { runEmbedded } from '../../../src/compose/embedded-run.js';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { readAcceptedHistory } from '../../../src/world/history/accepted-history.js';
import { startCli } from '../../helpers/cli-process.js';
import { itWith } from '../../helpers/services.js';
import { attackRoot, honestTask, runAttackedWorld, type AttackedWorld } from './adversarial-world.js';

/**
 * Self-reported figures that would lock a world. An agent (a shell script in the bwrap agent
 * sandbox, reporting usage as Claude Code does) claims $99,999 for one episode without calling its
 * model: what counts is what the model gateway measured (nothing), and the report is flagged.
 * Honest episodes make one real call each through the gateway, at $0.80 a call, and spend the
 * world's real budget; the stop holds run after run until a person lifts it with `genesis budget
 * lift`, without editing world.yaml, and the reason is shown.
 */
const agent = `#!/bin/sh
usage() { printf '{"type":"result","usage":{"input_tokens":%s,"output_tokens":0},"total_cost_usd":%s}\\n' "$1" "$2"; }
case "$GENESIS_TASK_ID" in
liar) usage 10 99999 ;;
*)
  node -e "fetch(process.env.GENESIS_MODEL_URL + '/v1/messages', { method: 'POST', headers: { ...(process.env.ANTHROPIC_API_KEY ? { 'x-api-key': process.env.ANTHROPIC_API_KEY } : {}), 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'priced-model', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }) }).then((r) => console.log('call=' + r.status))"
  mkdir -p src; printf "export const v = '%s';\\n" "$GENESIS_TASK_ID" > "src/$GENESIS_TASK_ID.js"; usage 1000 0.8 ;;
esac
`;

let w: AttackedWorld;
let model: Server;

beforeAll(async () => {
  // Every call answers 1,000 input tokens: $0.80 at the world's agent.price.
  model = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'msg',
          type: 'message',
          role: 'assistant',
          content: [{ type: 'text', text: 'ok' }],
          usage: { input_tokens: 1000, output_tokens: 0 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => model.listen(0, '127.0.0.1', resolve));
  const dirs = await attackRoot();
  const [a, b, c] = ['a', 'b', 'c'].map(honestTask);
  const manifest = {
    name: 'budget-attacks',
    goal: { outcome: 'the modules exist', stop: { maxCostUsd: 1.5 } },
    verify: { sandbox: 'bwrap', test: 'node --test test/base.test.js', timeoutSec: 60 },
    protected: ['test/**', 'world.yaml', '.genesis/**'],
    agent: {
      kind: 'command',
      preset: 'claude-code',
      command: ['sh', '.genesis/agent.sh'],
      baseUrl: `http://127.0.0.1:${(model.address() as AddressInfo).port}`,
      price: { inputPerMTok: 800, outputPerMTok: 0 },
      timeoutSec: 30,
      sandbox: 'bwrap',
    },
    retry: { maxAttempts: 1 },
    parallelism: 1,
    tasks: [
      { id: 'liar', title: 'liar', paths: ['src/liar.js'] },
      { ...a!.task, dependsOn: ['liar-free'] },
      { id: 'liar-free', title: 'liar free', paths: ['src/liar-free.js'] },
      { ...b!.task, dependsOn: ['a'] },
      { ...c!.task, dependsOn: ['b'] },
    ],
  };
  w = await runAttackedWorld({ root: dirs.root, manifest, files: { ...a!.files, ...b!.files, ...c!.files, '.genesis/agent.sh': agent }, sandbox: 'bwrap' });
}, 300_000);
afterAll(async () => {
  await w?.dispose();
  model?.close();
});

describe('figures an agent reports', () => {
  itWith('bwrap')('charge nothing but what the gateway measured: the run goes on to spend its real budget', () => {
    const liar = w.episodeOf('liar');
    expect(liar.usageProblems).toEqual(expect.arrayContaining([expect.stringMatching(/^usage-implausible: costUsd was 99999/)]));
    expect(liar).toMatchObject({ usageSource: 'wire', modelCalls: 0, usage: { costUsd: 0 } });
    expect(w.episodeOf('a')).toMatchObject({ usageSource: 'wire', modelCalls: 1, usage: { inputTokens: 1000, costUsd: 0.8 } });
    // Two honest episodes of $0.80 each spend the $1.50: the stop is the real one.
    expect(w.summary.stop).toMatchObject({ kind: 'budget', budget: 'maxCostUsd', limit: 1.5, used: 1.6 });
    expect(w.episodes.map((e) => e.task).sort()).toEqual(['a', 'liar', 'liar-free']);
  });

  itWith('bwrap')(
    'hold the stop until a person lifts it with genesis budget lift, whose reason genesis budget shows',
    async () => {
      const again = await runEmbedded({ world: w.world, sandbox: w.sandbox });
      expect(again.stop).toMatchObject({ kind: 'budget', budget: 'maxCostUsd' });
      expect((await new GitLedger(w.world.path).readAll()).length).toBe(3);
      const lift = startCli(['budget', 'lift', '--world', w.world.path, '--cost-usd', '2', '--reason', 'the liar was not charged; finish b and c']);
      expect(await lift.exited, lift.stderr()).toBe(0);
      const shown = startCli(['budget', '--world', w.world.path]);
      expect(await shown.exited, shown.stderr()).toBe(0);
      expect(shown.lines.join('\n')).toMatch(/maxCostUsd\s+1\.5\s+\+2\s+3\.5\s+1\.6 usd/);
      expect(shown.lines.join('\n')).toContain('maxCostUsd +2: the liar was not charged; finish b and c');
      const lifted = await runEmbedded({ world: w.world, sandbox: w.sandbox });
      expect(lifted.stop.kind).not.toBe('budget');
      const landed = (await readAcceptedHistory(w.world.path, 'main')).map((c) => c.task).filter(Boolean);
      expect(landed.sort()).toEqual(['a', 'b', 'c', 'liar-free']);
      // The stop was lifted without touching world.yaml.
      expect((await w.world.manifestAt('main')).goal.stop.maxCostUsd).toBe(1.5);
    },
    180_000,
  );
});
