import { afterEach, describe, expect } from 'vitest';
import type { AgentCliName } from '../../../../helpers/agent-clis.js';
import { startAnthropicServer } from '../../../../helpers/model-servers/anthropic-messages.js';
import type { ScriptedServer } from '../../../../helpers/model-servers/scripted-server.js';
import { itWith } from '../../../../helpers/services.js';
import { GOOD_A } from '../../../../helpers/world-fixture.js';
import { CLI_SERVERS, runCliWorld } from './cli-world.js';

let server: ScriptedServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

// Each class is read at the model gateway, where the refusal happens, the same for every CLI (Claude Code would retry a 401
// until it is killed).
describe('the failure classes of a real CLI, read at the gateway', () => {
  itWith('bwrap')('holds the world through a usage limit and retries an overloaded model, both uncharged, then lands', { timeout: 600_000 }, async () => {
    server = await startAnthropicServer();
    server.resetAfterSec = 2;
    server.script = [
      { mode: 'usage-limit', count: 1 },
      { mode: 'overloaded', count: 3 },
    ];
    const run = await runCliWorld('claude-code', server, { baseUrl: server.origin, model: 'claude-sonnet-4-5' }, { retry: { maxAttempts: 1 } });

    expect(run.episodes.map((e) => [e.outcome, e.reason, e.attempt])).toEqual([
      ['abandoned', 'agent-usage-limit', 1],
      ['abandoned', 'agent-overloaded', 1],
      ['accepted', null, 1],
    ]);
    expect(run.summary).toMatchObject({ accepted: 1, failed: 0, abandoned: 2 });
    expect(await run.world.world.readFile('main', 'src/a.js')).toBe(GOOD_A);
    const hold = run.events.find((e) => e.type === 'hold');
    expect(hold).toMatchObject({ type: 'hold', message: expect.stringContaining('429') });
    // The next episode started only once the limit had reset.
    const second = Date.parse(run.episodes[1]!.startedAt);
    expect(second).toBeGreaterThanOrEqual((hold as { untilMs: number }).untilMs);
  });

  itWith('bwrap')('stops the run at the first refused credentials with agent-auth-failed, not at the timeout', { timeout: 600_000 }, async () => {
    server = await startAnthropicServer({ mode: 'auth' });
    const run = await runCliWorld('claude-code', server, { baseUrl: server.origin, model: 'claude-sonnet-4-5', timeoutSec: 900 });

    expect(run.summary.stop).toMatchObject({ kind: 'circuit-open', reason: 'agent-auth-failed' });
    expect(run.episodes).toHaveLength(1);
    expect(run.episodes[0]).toMatchObject({ reason: 'agent-auth-failed', message: expect.stringContaining('refused the credentials') });
    // Claude Code's own retries would take minutes; stopped at its first retried 401 instead.
    expect(server.requests.filter((r) => r.url.startsWith('/v1/messages')).length).toBeLessThanOrEqual(3);
  });

  const others = CLI_SERVERS.filter((c) => c.cli !== 'claude-code');
  // The gateway reads each 429's reset where the vendor sends it (retry-after, x-ratelimit-reset-*, Gemini's RetryInfo), whether
  // or not the CLI prints it (Codex does not), and ends the episode at the first one. `overloads`: enough refusals that three
  // come in a row, which ends an episode as agent-overloaded whatever the CLI's own retries. Qwen Code retries a limit or an
  // overload quietly for minutes before it says so: the gateway does not wait for it to.
  const overloadsOf: Partial<Record<AgentCliName, number>> = { codex: 6, opencode: 4 };
  const limited = others.map((c) => ({ ...c, limits: 1, overloads: overloadsOf[c.cli] ?? 3 }));
  for (const { cli, start, root, model, limits } of limited) {
    itWith('bwrap')(`reads ${cli}'s usage limit as a hold of the world, uncharged`, { timeout: 600_000 }, async () => {
      server = await start();
      server.resetAfterSec = 2;
      server.script = [{ mode: 'usage-limit', count: limits }];
      const run = await runCliWorld(cli, server, { baseUrl: `${server.origin}${root}`, model }, { retry: { maxAttempts: 1 } }, (e) => e.type === 'hold');

      expect(run.episodes.map((e) => [e.outcome, e.reason, e.attempt])).toEqual([['abandoned', 'agent-usage-limit', 1]]);
      expect(run.events.find((e) => e.type === 'hold')).toMatchObject({
        message: expect.stringContaining('it resets at'),
      });
    });
  }

  // Each retries an overload by itself first (Codex within its turn, Gemini CLI and opencode with a backoff of seconds): the
  // episode ends at the third retry the output shows.
  for (const { cli, start, root, model, overloads } of limited) {
    itWith('bwrap')(`reads ${cli}'s overloaded model as agent-overloaded, retried uncharged until it lands`, { timeout: 600_000 }, async () => {
      server = await start();
      server.script = [{ mode: 'overloaded', count: overloads }];
      const run = await runCliWorld(cli, server, { baseUrl: `${server.origin}${root}`, model }, { retry: { maxAttempts: 1 } });

      expect(run.summary).toMatchObject({ accepted: 1, failed: 0 });
      const refused = run.episodes.slice(0, -1);
      expect(refused.length).toBeGreaterThan(0);
      expect(refused.map((e) => [e.reason, e.attempt])).toEqual(refused.map(() => ['agent-overloaded', 1]));
      expect(run.episodes.at(-1)).toMatchObject({ outcome: 'accepted', attempt: 1 });
    });
  }

  for (const { cli, start, root, model } of others) {
    itWith('bwrap')(`reads ${cli}'s refused credentials as agent-auth-failed and opens the circuit`, { timeout: 600_000 }, async () => {
      server = await start({ mode: 'auth' });
      const run = await runCliWorld(cli, server, { baseUrl: `${server.origin}${root}`, model, timeoutSec: 900 });

      expect(run.summary.stop).toMatchObject({ kind: 'circuit-open', reason: 'agent-auth-failed' });
      expect(run.episodes.map((e) => e.reason)).toEqual(['agent-auth-failed']);
    });
  }
});
