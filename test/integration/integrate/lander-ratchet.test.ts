import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { describe, expect } from 'vitest';
import { newEpisodeId } from '../../../src/episode/episode-job.js';
import { Lander } from '../../../src/integrate/lander.js';
import { VerificationLedger } from '../../../src/integrate/verification/ledger.js';
import { acceptedCommitMessage, readHeadScore } from '../../../src/world/history/accepted-history.js';
import { openEpisodeRecord, type EpisodeRecord, type GateRecord } from '../../../src/ledger/episode-record.js';
import { git, gitValue } from '../../../src/git/git.js';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import type { WorldRepo } from '../../../src/world/world-repo.js';
import { itWith } from '../../helpers/services.js';

const BIN = fileURLToPath(new URL('../../../bin/genesis.js', import.meta.url));
import { baseManifest, makeWorld, type FixtureWorld } from '../../helpers/world-fixture.js';

/**
 * Ratchet worlds in the pipeline: a change verified on a speculative tip may have met a floor
 * older than the change ahead of it (whose own verification was still running). The lander sees
 * the final order, so it is where "the score never falls" must hold.
 */
const gate = (score: number): GateRecord => ({ ok: true, sandbox: 'bwrap', summary: `${score} passed`, steps: [], durationMs: 1, score });

async function commitOn(world: WorldRepo, parent: string, path: string, content: string, message: string): Promise<string> {
  const env = { GIT_INDEX_FILE: `${world.scratchDir}-ratchet.index` };
  await git(['read-tree', parent], { cwd: world.path, env });
  const blob = await gitValue(['hash-object', '-w', '--stdin'], { cwd: world.path, input: content });
  await git(['update-index', '--add', '--cacheinfo', `100644,${blob},${path}`], { cwd: world.path, env });
  return world.commitTree(await gitValue(['write-tree'], { cwd: world.path, env }), [parent], message);
}

/** Change `a` landed with a score of 5; change `b`, gated on the base, is verified again on that head. */
async function raceAfterA(f: FixtureWorld, scoreOnTip: number) {
  const ledger = new GitLedger(f.world.path);
  const lander = new Lander(f.world, ledger, 'main', f.commit);
  const a = await commitOn(
    f.world,
    f.commit,
    'src/a.js',
    'export const a = 1;\n',
    acceptedCommitMessage({ title: 'a', episode: 'ep-a', task: 'a', attempt: 1, agent: 'test', verified: 'passed', score: 5 }),
  );
  expect(await lander.swap(a, f.commit)).toBe(true);
  const id = newEpisodeId();
  const candidate = await commitOn(f.world, f.commit, 'src/b.js', 'export const b = 1;\n', 'candidate\n');
  const record: EpisodeRecord = {
    ...openEpisodeRecord({ id, world: 'fixture', task: 'b', attempt: 1, agent: 'test', base: f.commit, worker: 'test' }),
    candidate,
    changedFiles: ['src/b.js'],
    gate: gate(3),
  };
  await ledger.write(record);
  const verificationId = `${id}-v1`;
  const tip = await commitOn(
    f.world,
    a,
    'src/b.js',
    'export const b = 1;\n',
    acceptedCommitMessage({ title: 'b', episode: id, task: 'b', attempt: 1, agent: 'test', verified: 'passed; verified again', verification: verificationId }),
  );
  const tree = await f.world.treeOf(tip);
  await new VerificationLedger(f.world.path).write(
    {
      version: 1,
      verificationId,
      episodeId: id,
      commit: tip,
      tree,
      onto: a,
      ok: true,
      reason: null,
      message: null,
      signature: null,
      gate: gate(scoreOnTip),
      worker: 'test',
      endedAt: new Date().toISOString(),
    },
    'log\n',
  );
  const outcome = await lander.land({
    change: { id, task: 'b', base: f.commit, candidate } as never,
    commit: tip,
    expected: a,
    verifiedOn: a,
    generation: 1,
    verificationId,
    startedAt: performance.now(),
  });
  return { outcome, tip, a };
}

const ratchet = () =>
  baseManifest({
    verify: { sandbox: 'auto', mode: 'ratchet', test: 'node --test test/base.test.js', timeoutSec: 60, limits: { cpus: 1, memoryMb: 256, pids: 64 } },
  });

describe('the lander in a ratchet world', () => {
  itWith('bwrap')('refuses a change whose verified score is below the head it would land on', async () => {
    const f = await makeWorld({ sandbox: 'bwrap', manifest: ratchet(), recording: {} });
    const { outcome, a } = await raceAfterA(f, 4);
    expect(outcome).toMatchObject({ landed: false, moved: false, reason: 'score-fell' });
    expect(await f.world.head('main')).toBe(a);
  });

  itWith('bwrap')('lands one that keeps the score, and the next floor is the score its verification recorded', async () => {
    const f = await makeWorld({ sandbox: 'bwrap', manifest: ratchet(), recording: {} });
    const { outcome, tip } = await raceAfterA(f, 7);
    expect(outcome).toMatchObject({ landed: true });
    expect(await f.world.head('main')).toBe(tip);
    // The landed commit has no Genesis-Score trailer (written before its gate ran): the floor comes from its verification.
    expect(await readHeadScore(f.world.path, 'main', tip)).toBe(7);
    // genesis log shows that score too, read from the verification the trailer names.
    const log = await execa('node', [BIN, 'log', '--world', f.world.path, '--json']);
    expect((JSON.parse(log.stdout) as Array<{ commit: string; score: number | null }>).find((c) => c.commit === tip)?.score).toBe(7);
  });
});
