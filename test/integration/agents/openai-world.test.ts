import { afterEach, describe, expect } from 'vitest';
import { runEmbedded } from '../../../src/compose/embedded-run.js';
import { readAcceptedHistory } from '../../../src/world/history/accepted-history.js';
import type { EpisodeRecord } from '../../../src/ledger/episode-record.js';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { startCli } from '../../helpers/cli-process.js';
import { itWith } from '../../helpers/services.js';
import { baseManifest, GOOD_A, GOOD_B, makeWorld } from '../../helpers/world-fixture.js';
import { loadRecording, startReplayServer, type ReplayServer } from './replay-server.js';

let server: ReplayServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('a world built by the openai agent against a replayed model', () => {
  itWith('bwrap')('lands the changes the model makes, with usage, cost and the transcript in the ledger', async () => {
    server = await startReplayServer(await loadRecording('world-tasks'));
    const manifest = baseManifest({ agent: { kind: 'openai', baseUrl: server.baseUrl, model: 'gpt-4.1-mini', timeoutSec: 60 } });
    const f = await makeWorld({ sandbox: 'bwrap', manifest, recording: {} });

    const summary = await runEmbedded({ world: f.world, sandbox: f.sandbox });

    expect(server.mismatches).toEqual([]);
    expect(summary.stop.kind).toBe('done');
    expect(summary.accepted).toBe(2);
    const history = await readAcceptedHistory(f.world.path, 'main');
    expect(history.filter((c) => c.episode).map((c) => c.agent)).toEqual(['openai:gpt-4.1-mini', 'openai:gpt-4.1-mini']);
    expect(await f.world.readFile('main', 'src/a.js')).toBe(GOOD_A);
    expect(await f.world.readFile('main', 'src/b.js')).toBe(GOOD_B);

    const ledger = new GitLedger(f.world.path);
    const episodes = await ledger.readAll();
    for (const e of episodes) {
      expect(e).toMatchObject({ outcome: 'accepted', agent: 'openai:gpt-4.1-mini' });
      // 900 + 1100 + 1180 + 1300 input (768 + 1024 + 1024 cached), 20 + 30 + 20 + 25 output, at gpt-4.1-mini's list price.
      expect(e.usage).toEqual({ inputTokens: 4480, outputTokens: 95, cachedTokens: 2816, costUsd: 0.001099 });
      const artifacts = await ledger.readArtifacts(e.id);
      const transcript = JSON.parse(artifacts.transcript!) as { stats: { turns: number }; messages: Array<{ role: string; content: string }> };
      expect(transcript.stats.turns).toBe(4);
      // The model got the prompt the episode recorded.
      expect(transcript.messages[1]!.content).toBe(artifacts.prompt);
      expect(artifacts.agentLog).toContain('[turn 3] run_command');
    }

    const cli = startCli(['episodes', '--world', f.world.path, '--json']);
    expect(await cli.exited).toBe(0);
    const listed = JSON.parse(cli.lines.join('\n')) as EpisodeRecord[];
    expect(listed.map((e) => e.usage)).toEqual([episodes[0]!.usage, episodes[1]!.usage]);

    // Each accepted commit says what its episode cost; `genesis log` adds the change's time and tokens, and the audit agrees.
    expect(history.filter((c) => c.episode).map((c) => c.cost)).toEqual([0.001099, 0.001099]);
    const log = startCli(['log', '--world', f.world.path, '--json']);
    expect(await log.exited).toBe(0);
    const changes = (JSON.parse(log.lines.join('\n')) as Array<{ cost: number | null; spend: Record<string, number> | null }>).filter((c) => c.spend);
    expect(changes).toHaveLength(2);
    for (const c of changes) expect(c.spend).toMatchObject({ episodes: 1, tokens: 4575, costUsd: 0.001099, episodesWithoutCost: 0 });
    const audit = startCli(['audit', '--world', f.world.path, '--json']);
    expect(await audit.exited).toBe(0);
  });
});
