import { expect } from 'vitest';
import { readAcceptedHistory, type AcceptedCommit } from '../../../src/world/accepted-history.js';
import { Ledger } from '../../../src/world/ledger.js';
import { auditCli } from '../audit/audited-world.js';

/**
 * What a run against a world on a git server must leave there, whatever the transport: every
 * task landed on the server's branch, the accepted ledger records beside it naming exactly those
 * commits, and an audit of the server's repository with nothing to report. Returns the history
 * for checks of the caller's own.
 */
export async function expectLandedOnServer(server: string, tasks: string[]): Promise<AcceptedCommit[]> {
  const history = await readAcceptedHistory(server, 'main');
  expect(history.map((c) => c.task).filter(Boolean).sort()).toEqual([...tasks].sort());
  const records = await new Ledger(server).readAll();
  expect(records.filter((r) => r.status === 'final' && r.outcome === 'accepted').map((r) => r.commit).sort()).toEqual(history.filter((c) => c.task).map((c) => c.commit).sort());
  const { code, report } = await auditCli(server);
  expect(report.findings).toEqual([]);
  expect(code).toBe(0);
  return history;
}
