import { describe, expect, it } from 'vitest';
import { checkChangesAgainstRules } from '../../../src/audit/change-checks.js';
import { checkHistoryShape } from '../../../src/audit/history-checks.js';
import { checkCommitsAgainstLedger, checkLedgerOutcomes } from '../../../src/audit/ledger-checks.js';
import type { AuditedCommit } from '../../../src/audit/read-history.js';
import type { EpisodeRecord } from '../../../src/ledger/episode-record.js';
import { readManifest } from '../../../src/manifest/parse.js';

// The rules as plain functions, on made-up histories: the cases a real world cannot easily be
// brought into (the integration tests in audit.test.ts tamper with real worlds for the rest).
const sha = (n: number) => n.toString(16).padStart(40, '0');
const commit = (n: number, fields: Partial<AuditedCommit> = {}): AuditedCommit => ({
  commit: sha(n),
  parents: n === 0 ? [] : [sha(n - 1)],
  date: '',
  subject: `c${n}`,
  episode: `e${n}`,
  task: `t${n}`,
  attempt: 1,
  agent: 'script',
  verified: 'ok',
  score: null,
  tree: sha(1000 + n),
  changed: [`src/t${n}.js`],
  manifestKey: 'm',
  ...fields,
});
const record = (n: number, fields: Partial<EpisodeRecord> = {}): EpisodeRecord => ({
  version: 1,
  id: `e${n}`,
  world: 'w',
  task: `t${n}`,
  attempt: 1,
  agent: 'script',
  base: sha(n - 1),
  candidate: sha(2000 + n),
  commit: sha(n),
  status: 'final',
  outcome: 'accepted',
  reason: null,
  message: null,
  signature: null,
  startedAt: '',
  endedAt: '',
  phases: {},
  gate: { ok: true, sandbox: 'bwrap', summary: '', steps: [], durationMs: 0 },
  changedFiles: [],
  usage: null,
  worker: 'w',
  ...fields,
});
const root = commit(0, { episode: null, task: null, attempt: null, changed: ['world.yaml'] });
const codes = (findings: Array<{ code: string }>) => findings.map((f) => f.code);

describe('the audit rules on the accepted history', () => {
  it('find an episode that landed twice', () => {
    expect(codes(checkHistoryShape([commit(2, { episode: 'e1', task: 't2' }), commit(1), root]))).toEqual(['landed-twice']);
  });

  it('warn of a task landed twice, unless a reopening that changed nothing came between', () => {
    const land = (n: number) => commit(n, { task: 't1' });
    const reopen = (n: number, changed: string[]) => commit(n, { episode: null, task: null, reopen: 't1', amend: 'me: reopen task t1', changed });
    expect(codes(checkHistoryShape([land(2), land(1), root]))).toEqual(['task-landed-twice']);
    expect(checkHistoryShape([land(3), reopen(2, []), land(1), root])).toEqual([]);
    // The trailer on a commit that changes files is no reopening: it excuses nothing.
    expect(codes(checkHistoryShape([land(3), reopen(2, ['src/t1.js']), land(1), root]))).toEqual(['task-landed-twice']);
    // A reopening excuses one landing after it, not two.
    expect(codes(checkHistoryShape([land(4), land(3), reopen(2, []), land(1), root]))).toEqual(['task-landed-twice']);
  });

  it('find a commit naming an episode the ledger does not have', () => {
    expect(codes(checkCommitsAgainstLedger([commit(1), root], new Map(), new Map()))).toEqual(['no-ledger-record']);
  });

  it('find a commit whose tree is not the one its episode verified, unless the change was replayed', () => {
    const trees = new Map([[sha(2001), sha(9999)]]);
    expect(codes(checkCommitsAgainstLedger([commit(1), root], new Map([['e1', record(1)]]), trees))).toEqual(['tree-differs-from-candidate']);
    expect(checkCommitsAgainstLedger([commit(1), root], new Map([['e1', record(1, { reason: 'replayed' })]]), trees)).toEqual([]);
  });

  it('accept a Genesis-Cost that agrees with the record and find one that does not', () => {
    const costed = (costUsd: number | null) => new Map([['e1', record(1, { usage: { inputTokens: 10, outputTokens: 5, costUsd } })]]);
    expect(checkCommitsAgainstLedger([commit(1, { cost: 0.012346 }), root], costed(0.0123456), new Map())).toEqual([]);
    expect(checkCommitsAgainstLedger([commit(1), root], costed(0.5), new Map())).toEqual([]);
    const forged = checkCommitsAgainstLedger([commit(1, { cost: 0.01 }), root], costed(2.5), new Map());
    expect(codes(forged)).toEqual(['ledger-mismatch']);
    expect(forged[0]!.message).toContain("Genesis-Cost is 0.01 USD, the record's cost 2.5 USD");
    expect(codes(checkCommitsAgainstLedger([commit(1, { cost: 0.01 }), root], costed(null), new Map()))).toEqual(['ledger-mismatch']);
  });

  it('find a head whose manifest does not parse, once however many commits carry it', () => {
    const broken = new Map<string, ReturnType<typeof readManifest> | string[]>([['m', ['name: required']]]);
    expect(codes(checkChangesAgainstRules([commit(2), commit(1), root], broken))).toEqual(['manifest-unreadable']);
  });

  it('accept a change within its task paths and report one outside them', () => {
    const manifest = readManifest(
      'name: w\ngoal: { outcome: x }\nverify: { test: "true" }\nagent: { kind: script, script: r }\ntasks:\n  - { id: t1, title: t, paths: [src/t1.js] }\n',
    );
    const rules = new Map([['m', manifest]]);
    expect(checkChangesAgainstRules([commit(1), root], rules)).toEqual([]);
    expect(codes(checkChangesAgainstRules([commit(1, { changed: ['src/t1.js', 'src/other.js'] }), root], rules))).toEqual(['outside-task-paths']);
  });
});

describe('the audit rules on the ledger', () => {
  it('find a closed record without an outcome', () => {
    const entries = [{ id: 'e1', record: record(1, { outcome: null }), problem: null }];
    expect(codes(checkLedgerOutcomes(entries, new Set([sha(1)]), null))).toEqual(['episode-not-final']);
  });

  it('warn once about every record left running, and not at all while a run holds the world', () => {
    const entries = [1, 2].map((n) => ({ id: `e${n}`, record: record(n, { status: 'running', outcome: null, commit: null }), problem: null }));
    expect(checkLedgerOutcomes(entries, new Set(), null)).toMatchObject([
      { code: 'episode-open', severity: 'warning', message: expect.stringContaining('2 episode(s)') },
    ]);
    expect(checkLedgerOutcomes(entries, new Set(), 'genesis run on host (pid 1)')).toEqual([]);
  });
});
