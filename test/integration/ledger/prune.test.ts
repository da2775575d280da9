import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EpisodeRecord } from '../../../src/ledger/episode-record.js';
import { git, gitValue } from '../../../src/git/git.js';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { PRUNED_DIFF_BYTES, pruneRejectedChanges } from '../../../src/ledger/prune.js';
import { tempDir } from '../../helpers/temp-dir.js';

const DAY = 86_400_000;
const NOW = Date.parse('2026-06-01T00:00:00Z');

async function bare(): Promise<string> {
  const path = join(await tempDir('genesis-prune-'), 'w.world');
  execFileSync('git', ['init', '--quiet', '--bare', path]);
  return path;
}

/** A candidate commit holding one blob of `bytes` random bytes: what an episode's change leaves in the world. */
async function candidate(repo: string, bytes: number): Promise<{ commit: string; blob: string }> {
  const blob = await gitValue(['hash-object', '-w', '--stdin'], { cwd: repo, input: randomBytes(bytes) });
  const tree = await gitValue(['mktree'], { cwd: repo, input: `100644 blob ${blob}\tbig.bin\n` });
  return { commit: await gitValue(['commit-tree', tree], { cwd: repo, input: 'candidate\n' }), blob };
}

function record(id: string, outcome: EpisodeRecord['outcome'], candidateCommit: string, endedAt: number): EpisodeRecord {
  return {
    version: 1,
    id,
    world: 'w',
    task: 't',
    attempt: 1,
    agent: 'a',
    base: candidateCommit,
    candidate: candidateCommit,
    commit: outcome === 'accepted' ? candidateCommit : null,
    status: 'final',
    outcome,
    reason: outcome === 'accepted' ? null : 'test-failed',
    message: null,
    signature: null,
    startedAt: new Date(endedAt - 1000).toISOString(),
    endedAt: new Date(endedAt).toISOString(),
    phases: {},
    gate: null,
    changedFiles: ['big.bin'],
    usage: null,
    worker: 'test',
  };
}

const exists = async (repo: string, object: string) => (await git(['cat-file', '-e', object], { cwd: repo, okExitCodes: [1, 128] })).exitCode === 0;

describe('pruning the changes of episodes that did not land', () => {
  it('drops old rejected and failed changes after the retention, keeping every record and a cut diff', async () => {
    const repo = await bare();
    const ledger = new GitLedger(repo);
    const old = [await candidate(repo, 2 * 1024 * 1024), await candidate(repo, 2 * 1024 * 1024)];
    const young = await candidate(repo, 1024);
    const accepted = await candidate(repo, 1024);
    await ledger.write(record('e1-rejected', 'rejected', old[0]!.commit, NOW - 20 * DAY), { diff: 'd'.repeat(100_000), gateLog: 'log 1' });
    await ledger.write(record('e2-failed', 'failed', old[1]!.commit, NOW - 15 * DAY), { diff: 'short diff' });
    await ledger.write(record('e3-young', 'rejected', young.commit, NOW - 2 * DAY));
    await ledger.write(record('e4-accepted', 'accepted', accepted.commit, NOW - 30 * DAY));
    await git(['update-ref', 'refs/genesis/quarantine/e2-failed', old[1]!.commit], { cwd: repo });
    // Objects as old as their episodes, so the gc's cutoff applies to them as it would in a world.
    execFileSync('find', [join(repo, 'objects'), '-type', 'f', '-exec', 'touch', '-d', new Date(NOW - 40 * DAY).toISOString(), '{}', '+']);

    const report = await pruneRejectedChanges(repo, { keepMs: 14 * DAY, now: NOW });

    expect(report.pruned.sort()).toEqual(['e1-rejected', 'e2-failed']);
    expect(report.bytesBefore).toBeGreaterThan(4 * 1024 * 1024);
    expect(report.bytesAfter).toBeLessThan(1024 * 1024);
    for (const c of old) expect(await exists(repo, c.blob)).toBe(false);
    expect(await exists(repo, young.blob)).toBe(true);
    expect(await exists(repo, accepted.blob)).toBe(true);
    const records = await ledger.readAll();
    expect(records.map((r) => r.id)).toEqual(['e1-rejected', 'e2-failed', 'e3-young', 'e4-accepted']);
    expect(records.find((r) => r.id === 'e1-rejected')).toMatchObject({
      outcome: 'rejected',
      candidate: old[0]!.commit,
      candidatePrunedAt: new Date(NOW).toISOString(),
    });
    expect(records.find((r) => r.id === 'e3-young')?.candidatePrunedAt).toBeUndefined();
    const artifacts = await ledger.readArtifacts('e1-rejected');
    expect(artifacts.gateLog).toBe('log 1');
    expect(artifacts.diff?.length).toBeLessThan(PRUNED_DIFF_BYTES + 200);
    expect(artifacts.diff).toContain(`[diff cut at ${PRUNED_DIFF_BYTES} bytes of 100000 when the change was pruned]`);
    expect((await ledger.readArtifacts('e2-failed')).diff).toBe('short diff');
    expect((await git(['for-each-ref', 'refs/genesis/quarantine/'], { cwd: repo })).stdout).toBe('');
  });

  it('prunes nothing twice, and nothing at all within the retention', async () => {
    const repo = await bare();
    const ledger = new GitLedger(repo);
    await ledger.write(record('e1', 'rejected', (await candidate(repo, 1024)).commit, NOW - 20 * DAY));
    expect((await pruneRejectedChanges(repo, { keepMs: 30 * DAY, now: NOW })).pruned).toEqual([]);
    expect((await pruneRejectedChanges(repo, { keepMs: 14 * DAY, now: NOW })).pruned).toEqual(['e1']);
    expect((await pruneRejectedChanges(repo, { keepMs: 14 * DAY, now: NOW })).pruned).toEqual([]);
  });
});
