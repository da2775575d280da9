import { describe, expect } from 'vitest';
import { newEpisodeId, type EpisodeResult } from '../../../src/episode/episode-job.js';
import { Integrator } from '../../../src/integrate/integrator.js';
import { readAcceptedHistory } from '../../../src/world/accepted-history.js';
import { git, gitValue } from '../../../src/world/git.js';
import type { WorldRepo } from '../../../src/world/world-repo.js';
import { itWith } from '../../helpers/services.js';
import { BAD_A, GOOD_A, GOOD_B, makeWorld } from '../../helpers/world-fixture.js';

/** A candidate commit on `base` that writes `files`, made with plumbing as a worker would. */
async function candidate(world: WorldRepo, base: string, files: Record<string, string>): Promise<string> {
  const env = { GIT_INDEX_FILE: `${world.scratchDir}-test.index` };
  await git(['read-tree', base], { cwd: world.path, env });
  for (const [path, content] of Object.entries(files)) {
    const sha = await gitValue(['hash-object', '-w', '--stdin'], { cwd: world.path, input: content });
    await git(['update-index', '--add', '--cacheinfo', `100644,${sha},${path}`], { cwd: world.path, env });
  }
  const tree = await gitValue(['write-tree'], { cwd: world.path, env });
  return world.commitTree(tree, [base], 'candidate\n');
}

function passed(task: string, base: string, cand: string): EpisodeResult {
  return { episodeId: newEpisodeId(), task, attempt: 1, base, candidate: cand, verdict: 'passed', reason: null, message: null, signature: null };
}

describe('the integrator', () => {
  itWith('docker')('fast-forwards with trailers when the head is still the base', async () => {
    const f = await makeWorld({ recording: {} });
    const integrator = new Integrator(f.world, f.sandbox, 'main');
    const result = passed('a', f.commit, await candidate(f.world, f.commit, { 'src/a.js': GOOD_A }));
    const outcome = await integrator.integrate({ result, title: 'module a', agent: 'test', verified: 'gate ok' });
    expect(outcome).toMatchObject({ outcome: 'accepted', replayed: false });
    const [head] = await readAcceptedHistory(f.world.path, 'main');
    expect(head).toMatchObject({ task: 'a', episode: result.episodeId, attempt: 1, agent: 'test', verified: 'gate ok' });
  });

  describe('when the head has moved since the episode started', () => {
    itWith('docker')('replays a clean change on the new head, verifies it again and lands it', async () => {
      const f = await makeWorld({ recording: {} });
      const integrator = new Integrator(f.world, f.sandbox, 'main');
      const first = passed('a', f.commit, await candidate(f.world, f.commit, { 'src/a.js': GOOD_A }));
      const second = passed('b', f.commit, await candidate(f.world, f.commit, { 'src/b.js': GOOD_B }));
      await integrator.integrate({ result: first, title: 'a', agent: 'test', verified: 'ok' });
      const outcome = await integrator.integrate({ result: second, title: 'b', agent: 'test', verified: 'ok' });
      expect(outcome).toMatchObject({ outcome: 'accepted', replayed: true });
      if (outcome.outcome !== 'accepted') throw new Error('unreachable');
      expect(outcome.gate?.steps.map((s) => s.name)).toEqual(['test', 'check:a', 'check:b']);
      const commits = await readAcceptedHistory(f.world.path, 'main');
      expect(commits.map((c) => c.task)).toEqual(['b', 'a', null]);
      expect(await f.world.readFile('main', 'src/a.js')).toBe(GOOD_A);
      expect(await f.world.readFile('main', 'src/b.js')).toBe(GOOD_B);
      expect(commits[0]!.verified).toContain('replayed on');
    });

    itWith('docker')('rejects a change that conflicts with the new head and leaves the head alone', async () => {
      const f = await makeWorld({ recording: {} });
      const integrator = new Integrator(f.world, f.sandbox, 'main');
      const first = passed('a', f.commit, await candidate(f.world, f.commit, { 'src/a.js': GOOD_A }));
      const rival = passed('a', f.commit, await candidate(f.world, f.commit, { 'src/a.js': "export const a = () => 'a'; // rival\n" }));
      await integrator.integrate({ result: first, title: 'a', agent: 'test', verified: 'ok' });
      const head = await f.world.head('main');
      const outcome = await integrator.integrate({ result: rival, title: 'a', agent: 'test', verified: 'ok' });
      expect(outcome).toMatchObject({ outcome: 'rejected', reason: 'replay-conflict' });
      expect(outcome.outcome === 'rejected' && outcome.message).toContain('src/a.js');
      expect(await f.world.head('main')).toBe(head);
    });

    itWith('docker')('rejects a replay that merges cleanly but breaks a check of a task already done', async () => {
      const f = await makeWorld({ recording: {} });
      const integrator = new Integrator(f.world, f.sandbox, 'main');
      const first = passed('a', f.commit, await candidate(f.world, f.commit, { 'src/a.js': GOOD_A }));
      await integrator.integrate({ result: first, title: 'a', agent: 'test', verified: 'ok' });
      const head = await f.world.head('main');
      // b's change also breaks a through a file a's module now depends on: made on the old base, it merges cleanly.
      const breaking = passed('b', f.commit, await candidate(f.world, f.commit, { 'src/b.js': GOOD_B, 'package.json': '{ "type": "commonjs" }\n' }));
      const outcome = await integrator.integrate({ result: breaking, title: 'b', agent: 'test', verified: 'ok' });
      expect(outcome.outcome).toBe('rejected');
      expect(await f.world.head('main')).toBe(head);
    });
  });

  itWith('docker')('leaves the accepted branch untouched when a compare-and-swap loses', async () => {
    const f = await makeWorld({ recording: {} });
    const bad = await candidate(f.world, f.commit, { 'src/a.js': BAD_A });
    expect(await f.world.compareAndSwap('refs/heads/main', bad, '0'.repeat(39) + '1')).toBe(false);
    expect(await f.world.head('main')).toBe(f.commit);
  });
});
