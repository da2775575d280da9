import { appendFile, cp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { newEpisodeId } from '../../../src/episode/episode-job.js';
import { openEpisodeRecord, type EpisodeRecord } from '../../../src/ledger/episode-record.js';
import { git, gitValue } from '../../../src/git/git.js';
import type { Ledger } from '../../../src/ledger/ledger.js';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { pruneRejectedChanges } from '../../../src/ledger/prune.js';
import { LedgerSummaryIndex, ledgerSummaryFile, summarize, type EpisodeSummary } from '../../../src/ledger/summary.js';
import { bareRepoWithCommit } from '../../helpers/bare-repo.js';

const bareRepo = () => bareRepoWithCommit('genesis-summary-');

/** A commit on `head` with one file of its own: a candidate a ledger record keeps reachable. */
async function candidate(repo: string, head: string, name: string): Promise<string> {
  const blob = await gitValue(['hash-object', '-w', '--stdin'], { cwd: repo, input: `${name}\n` });
  const tree = await gitValue(['mktree'], { cwd: repo, input: `100644 blob ${blob}\t${name}\n` });
  return gitValue(['commit-tree', tree, '-p', head], { cwd: repo, input: `${name}\n` });
}

const OUTCOMES = ['accepted', 'rejected', 'failed', 'abandoned'] as const;

/** Records of every kind: final with each outcome (with usage, signatures, messages), and open ones. */
async function writeRecords(ledger: Ledger, repo: string, head: string, count: number, endedAt = new Date()): Promise<EpisodeRecord[]> {
  const written: EpisodeRecord[] = [];
  for (let i = 0; i < count; i++) {
    const id = newEpisodeId(new Date(endedAt.getTime() - (count - i) * 1000));
    const open = openEpisodeRecord({ id, world: 'w', task: `t${i % 5}`, attempt: 1 + (i % 3), agent: 'a', base: head, worker: 'w' });
    const outcome = OUTCOMES[i % OUTCOMES.length]!;
    const record: EpisodeRecord =
      i % 7 === 6
        ? open
        : {
            ...open,
            candidate: await candidate(repo, head, `f${i}`),
            status: 'final',
            outcome,
            reason: outcome === 'accepted' ? null : 'test-failed',
            message: `episode ${i} ${outcome}`,
            signature: outcome === 'rejected' ? `sig-${i % 2}` : null,
            endedAt: endedAt.toISOString(),
            usage: { inputTokens: 100 * i, outputTokens: 10 * i, costUsd: i / 100 },
          };
    await ledger.write(record, { diff: 'x'.repeat(100 * i) });
    written.push(record);
  }
  return written;
}

const byId = (a: EpisodeSummary, b: EpisodeSummary) => a.id.localeCompare(b.id);

/** The full read the index stands in for, summarized. */
async function fullRead(repo: string): Promise<EpisodeSummary[]> {
  return (await new GitLedger(repo).readAll()).map(summarize).sort(byId);
}

async function indexed(repo: string): Promise<{ summaries: EpisodeSummary[]; read: number; known: number }> {
  const { summaries, stats } = await new LedgerSummaryIndex(repo, await ledgerSummaryFile(repo)).read();
  return { summaries: [...summaries].sort(byId), ...stats };
}

describe('the ledger summary index', () => {
  it('says what the full read says, reading from git only the records whose ref moved since it last looked', async () => {
    const { repo, head } = await bareRepo();
    const ledger = new GitLedger(repo);
    const records = await writeRecords(ledger, repo, head, 30);
    const first = await indexed(repo);
    expect(first.summaries).toEqual(await fullRead(repo));
    expect(first).toMatchObject({ read: 30, known: 0 });
    expect(await indexed(repo)).toMatchObject({ read: 0, known: 30 });
    // Two new episodes, one open record closed, one final record written again (a duplicate run's, say).
    await writeRecords(ledger, repo, head, 2);
    const open = records.find((r) => r.status === 'running')!;
    await ledger.write({ ...open, status: 'final', outcome: 'abandoned', reason: 'orchestrator-stopped', endedAt: new Date().toISOString() });
    await ledger.write({ ...records[0]!, message: 'written again' });
    const later = await indexed(repo);
    expect(later).toMatchObject({ read: 4, known: 28 });
    expect(later.summaries).toEqual(await fullRead(repo));
    expect(later.summaries.find((s) => s.id === open.id)).toMatchObject({ status: 'final', outcome: 'abandoned' });
  });

  it('stays right after a crash left its file torn, or someone else wrote records without it', async () => {
    const { repo, head } = await bareRepo();
    const ledger = new GitLedger(repo);
    await writeRecords(ledger, repo, head, 12);
    await indexed(repo);
    const file = await ledgerSummaryFile(repo);
    // A process killed mid-append leaves half a line; a record written meanwhile by a process that never indexed it.
    await appendFile(file, '["20991231-000000-000-abcdef","0123');
    await writeRecords(ledger, repo, head, 1);
    const after = await indexed(repo);
    expect(after.summaries).toEqual(await fullRead(repo));
    expect(after).toMatchObject({ read: 1, known: 12 });
    // A file that is not this index (another version, garbage) is not trusted: everything is read again.
    await writeFile(file, '{"version":1}\n["x","y",{}]\n');
    expect(await indexed(repo)).toMatchObject({ read: 13, known: 0 });
    expect((await indexed(repo)).summaries).toEqual(await fullRead(repo));
  });

  it('follows a prune, which rewrites the records of changes that did not land', async () => {
    const { repo, head } = await bareRepo();
    const ledger = new GitLedger(repo);
    await writeRecords(ledger, repo, head, 16, new Date(Date.now() - 3_600_000));
    await indexed(repo);
    const { pruned } = await pruneRejectedChanges(repo, { keepMs: 60_000, gc: false });
    expect(pruned.length).toBeGreaterThan(0);
    const after = await indexed(repo);
    expect(after.read).toBe(pruned.length);
    expect(after.summaries).toEqual(await fullRead(repo));
  });

  it('follows a restore from a backup: records written since are gone, records closed since are open again', async () => {
    const { dir, repo, head } = await bareRepo();
    const ledger = new GitLedger(repo);
    const records = await writeRecords(ledger, repo, head, 10);
    const backup = join(dir, 'backup.git');
    await git(['clone', '--quiet', '--mirror', repo, backup], { cwd: dir });
    const open = records.find((r) => r.status === 'running')!;
    await ledger.write({ ...open, status: 'final', outcome: 'failed', reason: 'agent-exit', endedAt: new Date().toISOString() });
    await writeRecords(ledger, repo, head, 3);
    expect((await indexed(repo)).summaries).toHaveLength(13);
    // The world's refs put back as the backup had them (its git directory keeps the index file of today).
    await git(['fetch', '--quiet', '--prune', backup, '+refs/*:refs/*'], { cwd: repo });
    const after = await indexed(repo);
    expect(after.summaries).toEqual(await fullRead(repo));
    expect(after.summaries).toHaveLength(10);
    expect(after.summaries.find((s) => s.id === open.id)).toMatchObject({ status: 'running' });
    // And a world restored whole from the mirror, without the file: read whole once.
    await rm(repo, { recursive: true, force: true });
    await cp(backup, repo, { recursive: true });
    expect(await indexed(repo)).toMatchObject({ read: 10, known: 0 });
  });

  it('counts the open episodes the journal holds, as the full read does', async () => {
    const { repo, head } = await bareRepo();
    const ledger = new GitLedger(repo);
    await writeRecords(ledger, repo, head, 5);
    const open = openEpisodeRecord({ id: newEpisodeId(), world: 'w', task: 't9', attempt: 1, agent: 'a', base: head, worker: 'w' });
    await ledger.open(open);
    const summaries = [...(await ledger.readSummaries())].sort(byId);
    expect(summaries).toEqual(await fullRead(repo));
    expect(summaries.find((s) => s.id === open.id)).toMatchObject({ status: 'running', task: 't9' });
  });
});
