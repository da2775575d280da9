import { expect } from 'vitest';
import { readAcceptedHistory, type AcceptedCommit } from '../../../src/world/history/accepted-history.js';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { VERIFICATION_REF_PREFIX } from '../../../src/world/history/verification-ref.js';
import { gitValue } from '../../../src/git/git.js';
import { auditCli } from '../audit/audited-world.js';

/**
 * What a run against a world on a git server must leave there, whatever the transport: every
 * task landed on the server's branch, the accepted ledger records beside it naming exactly those
 * commits, and an audit of the server's repository with nothing to report. Returns the history
 * for checks of the caller's own.
 */
export async function expectLandedOnServer(server: string, tasks: string[]): Promise<AcceptedCommit[]> {
  const history = await readAcceptedHistory(server, 'main');
  expect(
    history
      .map((c) => c.task)
      .filter(Boolean)
      .sort(),
  ).toEqual([...tasks].sort());
  const records = await new GitLedger(server).readAll();
  expect(
    records
      .filter((r) => r.status === 'final' && r.outcome === 'accepted')
      .map((r) => r.commit)
      .sort(),
  ).toEqual(
    history
      .filter((c) => c.task)
      .map((c) => c.commit)
      .sort(),
  );
  const { code, report } = await auditCli(server);
  expect(report.findings).toEqual([]);
  expect(code).toBe(0);
  return history;
}

/**
 * A distributed run whose episodes gated on the same head: one change had to be verified again on
 * top of the other, on a worker. Nothing may be lost on the way (each episode lands the first time,
 * none abandoned for want of a commit or a record), and the verification the lander relied on is on
 * the server, under its ref, naming the very commit that landed.
 */
export async function expectVerifiedOnWorkers(server: string, tasks: string[]): Promise<void> {
  const records = await new GitLedger(server).readAll();
  const ended = records.map((r) => ({ task: r.task, outcome: r.outcome, why: r.outcome === 'accepted' ? null : `${r.reason}: ${r.message}` }));
  expect(ended.sort((x, y) => x.task.localeCompare(y.task))).toEqual([...tasks].sort().map((task) => ({ task, outcome: 'accepted', why: null })));
  const verified = records.filter((r) => r.verification);
  expect(verified.length).toBeGreaterThan(0);
  for (const r of verified) {
    const json = await gitValue(['cat-file', 'blob', `${VERIFICATION_REF_PREFIX}${r.verification!.id}:record.json`], { cwd: server });
    expect(JSON.parse(json)).toMatchObject({ ok: true, commit: r.commit, tree: r.verification!.tree });
  }
}
