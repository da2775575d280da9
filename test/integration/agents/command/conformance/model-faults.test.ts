import { afterEach, describe, expect } from 'vitest';
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

/**
 * The faults of the road to the model, met by each real CLI through the gateway in one run: a
 * model that accepts the call and never answers, a stream the server cuts, a usage limit with
 * the vendor's reset. None is charged to the task, each ends or outlives its episode within
 * seconds (not at agent.timeoutSec), and the task then lands on its first attempt.
 */
describe('model faults met by each real CLI, through the gateway', () => {
  for (const { cli, start, root, model } of CLI_SERVERS) {
    itWith('bwrap')(`${cli}: a stall, a cut stream and a usage limit cost no attempt and no timeout`, { timeout: 600_000 }, async () => {
      server = await start();
      server.resetAfterSec = 2;
      server.script = [
        { mode: 'stall', count: 1 },
        { mode: 'cut', count: 1 },
        { mode: 'usage-limit', count: 1 },
      ];
      const started = Date.now();
      const run = await runCliWorld(cli, server, { baseUrl: `${server.origin}${root}`, model, stallSec: 5, timeoutSec: 600 }, { retry: { maxAttempts: 1 } });

      expect(run.summary).toMatchObject({ accepted: 1, failed: 0 });
      expect(await run.world.world.readFile('main', 'src/a.js')).toBe(GOOD_A);
      expect(run.episodes.every((e) => e.attempt === 1)).toBe(true);
      const reasons = run.episodes.map((e) => e.reason);
      expect(reasons[0]).toBe('model-stalled');
      expect(reasons).toContain('agent-usage-limit');
      // A cut the CLI retried by itself costs nothing; one it did not outlive ends its episode uncharged.
      const unexpected = run.episodes.filter((e) => e.reason !== null && !['model-stalled', 'model-stream-cut', 'agent-usage-limit'].includes(e.reason));
      expect(unexpected.map((e) => `${e.reason}: ${e.message}`)).toEqual([]);
      expect(run.episodes[0]!.message).toContain('sent nothing for 5 s');
      // Minutes at most, though each episode had ten.
      expect(Date.now() - started).toBeLessThan(300_000);
    });
  }

  itWith('bwrap')('claude-code: a local model server that goes away and comes back is waited for, and the task lands', { timeout: 600_000 }, async () => {
    server = await startAnthropicServer();
    const restarted = server.restart(8_000);
    const run = await runCliWorld('claude-code', server, { baseUrl: server.origin, model: 'claude-sonnet-4-5' }, { retry: { maxAttempts: 1 } });
    await restarted;

    expect(run.summary).toMatchObject({ accepted: 1, failed: 0 });
    const waited = run.episodes.filter((e) => e.reason === 'model-unreachable');
    expect(waited.length).toBeGreaterThan(0);
    expect(waited.every((e) => e.outcome === 'abandoned')).toBe(true);
    const holds = run.events.filter((e) => e.type === 'hold');
    expect(holds[0]).toMatchObject({ message: expect.stringContaining('the world waits') });
    expect(run.episodes.at(-1)).toMatchObject({ outcome: 'accepted', attempt: 1 });
  });
});
