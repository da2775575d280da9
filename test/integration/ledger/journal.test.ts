import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runEmbedded } from '../../../src/compose/embedded-run.js';
import { newEpisodeId } from '../../../src/episode/episode-job.js';
import { openEpisodeRecord, type EpisodeRecord } from '../../../src/ledger/episode-record.js';
import { git, gitValue } from '../../../src/git/git.js';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { startCli } from '../../helpers/cli-process.js';
import { itWith } from '../../helpers/services.js';
import { BAD_A, baseManifest, GOOD_A, GOOD_B, makeWorld, type FixtureWorld } from '../../helpers/world-fixture.js';
import { bareRepoWithCommit } from '../../helpers/bare-repo.js';

/** How many ledger commits were ever made for an episode (each write makes one; none is ever removed without gc). */
async function refWrites(repo: string, id: string): Promise<number> {
  const listed = await gitValue(['cat-file', '--batch-all-objects', '--batch-check=%(objecttype) %(objectname)'], { cwd: repo });
  const commits = listed
    .split('\n')
    .filter((l) => l.startsWith('commit '))
    .map((l) => l.slice('commit '.length));
  const out = (await git(['cat-file', '--batch'], { cwd: repo, input: `${commits.join('\n')}\n` })).stdout;
  return out.split(`\n\nepisode ${id}: `).length - 1;
}

async function filesOf(repo: string, id: string): Promise<string[]> {
  return (await gitValue(['ls-tree', '--name-only', `refs/genesis/episodes/${id}`], { cwd: repo })).split('\n').sort();
}

/** A change of task a on the world's first commit, as an episode's collect leaves it. */
async function candidateOf(f: FixtureWorld, content: string): Promise<string> {
  const env = { GIT_INDEX_FILE: `${f.world.scratchDir}-journal-test.index` };
  await git(['read-tree', f.commit], { cwd: f.world.path, env });
  const blob = await gitValue(['hash-object', '-w', '--stdin'], { cwd: f.world.path, input: content });
  await git(['update-index', '--add', '--cacheinfo', `100644,${blob},src/a.js`], { cwd: f.world.path, env });
  return f.world.commitTree(await gitValue(['write-tree'], { cwd: f.world.path, env }), [f.commit], 'candidate\n');
}

const bareRepo = () => bareRepoWithCommit('genesis-journal-');

describe('an episode run in the process that started it is written to the ledger once', () => {
  itWith('bwrap')('writes each episode to git once, at its end, with its record final and every log, and leaves no journal behind', async () => {
    const f = await makeWorld({
      sandbox: 'bwrap',
      manifest: baseManifest({ parallelism: 2 }),
      recording: { a: [{ write: { 'src/a.js': BAD_A } }, { write: { 'src/a.js': GOOD_A } }], b: [{ write: { 'src/b.js': GOOD_B } }] },
    });
    const summary = await runEmbedded({ world: f.world, sandbox: f.sandbox });
    expect(summary.stop.kind).toBe('done');
    const ledger = new GitLedger(f.world.path);
    const episodes = await ledger.readAll();
    expect(episodes.map((e) => [e.task, e.outcome])).toEqual(
      expect.arrayContaining([
        ['a', 'rejected'],
        ['a', 'accepted'],
        ['b', 'accepted'],
      ]),
    );
    expect(episodes).toHaveLength(3);
    for (const e of episodes) {
      expect(await refWrites(f.world.path, e.id), `${e.task} attempt ${e.attempt}`).toBe(1);
      expect(await ledger.readCommitted(e.id)).toMatchObject({ status: 'final', outcome: e.outcome });
      expect(await filesOf(f.world.path, e.id)).toEqual(['agent.log', 'diff.patch', 'gate.log', 'prompt.md', 'record.json']);
      // Still the evidence it was: the record commit's parent is the candidate.
      expect(await gitValue(['rev-parse', `refs/genesis/episodes/${e.id}^1`], { cwd: f.world.path })).toBe(e.candidate);
    }
    const rejected = episodes.find((e) => e.outcome === 'rejected')!;
    expect((await ledger.readArtifacts(rejected.id)).diff).toContain('src/a.js');
    expect(await ledger.journaled()).toEqual(new Set());
  });

  itWith('bwrap')('closes as abandoned, in git, an episode whose run was killed while its agent worked', async () => {
    const f = await makeWorld({
      sandbox: 'bwrap',
      manifest: baseManifest({ parallelism: 1 }),
      recording: { a: [{ write: { 'src/a.js': GOOD_A }, sleepMs: 20_000 }] },
    });
    const run = startCli(['run', '--world', f.world.path, '--json']);
    const phase = JSON.parse(await run.waitFor(/"type":"episode-phase".*"phase":"agent"/, 60_000)) as { id: string };
    const ledger = new GitLedger(f.world.path);
    // While it runs, the episode is open in the journal only, and readers of the ledger see it as running.
    expect(await ledger.readCommitted(phase.id)).toBeNull();
    expect(await ledger.read(phase.id)).toMatchObject({ id: phase.id, task: 'a', status: 'running' });
    expect((await ledger.readAll()).map((e) => [e.id, e.status])).toEqual([[phase.id, 'running']]);
    run.child.kill('SIGKILL');
    await run.exited;
    // The next run finds it, closes it and does the task again (the recording's next step is none: it fails empty).
    const summary = await runEmbedded({ world: f.world, sandbox: f.sandbox, maxEpisodes: 0 });
    expect(summary.episodes).toBe(0);
    expect(await ledger.readCommitted(phase.id)).toMatchObject({ status: 'final', outcome: 'abandoned', reason: 'orchestrator-stopped' });
    expect(await ledger.journaled()).toEqual(new Set());
  });

  itWith('bwrap')('lands a change whose gate passed before its run died, from the journal, keeping the logs its gate left', async () => {
    const f = await makeWorld({ sandbox: 'bwrap', recording: { a: [{ write: { 'src/a.js': BAD_A } }], b: [{ write: { 'src/b.js': GOOD_B } }] } });
    const ledger = new GitLedger(f.world.path);
    // What a kill -9 between a's passing gate and its landing leaves: the journal entry its episode held.
    const id = newEpisodeId();
    const open = openEpisodeRecord({ id, world: 'fixture', task: 'a', attempt: 1, agent: 'script', base: f.commit, worker: 'dead:1' });
    await ledger.open(open);
    const candidate = await candidateOf(f, GOOD_A);
    await ledger.hold(
      { ...open, candidate, changedFiles: ['src/a.js'], gate: { ok: true, sandbox: 'bwrap', summary: 'passed before the crash', steps: [], durationMs: 1 } },
      { prompt: 'the prompt', agentLog: 'agent said hello', diff: 'the diff', gateLog: 'the gate log before the crash' },
    );
    const summary = await runEmbedded({ world: f.world, sandbox: f.sandbox });
    expect(summary.stop.kind).toBe('done');
    const ofA = (await ledger.readAll()).filter((e) => e.task === 'a');
    // The recording's a would write BAD_A: no episode of a ran again, the held change landed.
    expect(ofA.map((e) => [e.id, e.outcome])).toEqual([[id, 'accepted']]);
    expect(await f.world.readFile('main', 'src/a.js')).toBe(GOOD_A);
    expect(await refWrites(f.world.path, id)).toBe(1);
    expect(await ledger.readArtifacts(id)).toMatchObject({ gateLog: 'the gate log before the crash', agentLog: 'agent said hello', diff: 'the diff' });
    expect(await ledger.journaled()).toEqual(new Set());
  });
});

describe('the ledger journal', () => {
  it('lets a final record in git stand over a journal entry a crash left beside it, and tidies that entry away', async () => {
    const { repo, head } = await bareRepo();
    const ledger = new GitLedger(repo);
    const open = openEpisodeRecord({ id: newEpisodeId(), world: 'w', task: 't', attempt: 1, agent: 'a', base: head, worker: 'w' });
    await ledger.hold(open, { gateLog: 'held log' });
    const final: EpisodeRecord = { ...open, status: 'final', outcome: 'failed', reason: 'agent-exit', endedAt: new Date().toISOString() };
    // As if the process died between the git write and the journal's drop: git final, journal still there.
    await ledger.write(final, { gateLog: 'final log' });
    await ledger.hold(open, { gateLog: 'held log' });
    expect(await ledger.read(open.id)).toMatchObject({ status: 'final', outcome: 'failed' });
    expect((await ledger.readAll()).map((r) => r.status)).toEqual(['final']);
    expect((await ledger.readArtifacts(open.id)).gateLog).toBe('final log');
    await ledger.tidyJournal();
    expect(await ledger.journaled()).toEqual(new Set());
  });

  it('writes what it holds to git, record and logs, when a stopping run leaves episodes open', async () => {
    const { repo, head } = await bareRepo();
    const ledger = new GitLedger(repo);
    const open = openEpisodeRecord({ id: newEpisodeId(), world: 'w', task: 't', attempt: 1, agent: 'a', base: head, worker: 'w' });
    await ledger.open(open);
    await ledger.hold({ ...open, message: 'gated' }, { gateLog: 'held log', prompt: 'p' });
    expect(await ledger.readCommitted(open.id)).toBeNull();
    await ledger.writeJournal();
    expect(await ledger.readCommitted(open.id)).toMatchObject({ status: 'running', message: 'gated' });
    expect(await ledger.readArtifacts(open.id)).toEqual({ gateLog: 'held log', prompt: 'p' });
    expect(await ledger.journaled()).toEqual(new Set());
  });

  it('keeps secrets out of the journal file as out of git', async () => {
    const { repo, head } = await bareRepo();
    const secret = 'sk-journal-test-0123456789abcdefghij';
    const ledger = new GitLedger(repo);
    const open = openEpisodeRecord({ id: newEpisodeId(), world: 'w', task: 't', attempt: 1, agent: 'a', base: head, worker: 'w' });
    await ledger.hold({ ...open, message: `leaked ${secret}` }, { agentLog: `the key is ${secret}` });
    const dir = join(repo, 'genesis', 'open-episodes');
    const [file] = await readdir(dir);
    const text = await readFile(join(dir, file!), 'utf8');
    expect(text).not.toContain(secret);
    expect(text).toContain('[redacted]');
  });
});
