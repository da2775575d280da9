import { describe, expect, it } from 'vitest';
import { VERIFICATION_REF_PREFIX, VerificationLedger, type VerificationRecord } from '../../../src/integrate/verification/ledger.js';
import { git, gitValue } from '../../../src/git/git.js';
import { writeCommit, writeObject, writeTree } from '../../../src/git/object-writer.js';
import { tempDir } from '../../helpers/temp-dir.js';

async function repoWithCommit(): Promise<{ repo: string; commit: string; tree: string }> {
  const repo = await tempDir('genesis-verification-ledger-');
  await git(['init', '--quiet', '--bare', repo], { cwd: repo });
  const blob = await writeObject(repo, 'blob', Buffer.from('export const a = 1;\n'));
  const tree = await writeTree(repo, [{ mode: '100644', name: 'a.js', sha: blob }]);
  const commit = await writeCommit(repo, { tree, parents: [], message: 'speculative\n' });
  return { repo, commit, tree };
}

function record(over: Partial<VerificationRecord> & Pick<VerificationRecord, 'commit' | 'tree'>): VerificationRecord {
  return {
    version: 1,
    verificationId: 'e1-v1',
    episodeId: 'e1',
    onto: over.commit,
    ok: true,
    reason: null,
    message: null,
    signature: null,
    gate: { ok: true, sandbox: 'bwrap', summary: '1 passed', steps: [], durationMs: 5 },
    worker: 'test',
    endedAt: new Date(0).toISOString(),
    ...over,
  };
}

describe('the verification ledger', () => {
  it('reads back what it wrote, keeps the speculative commit reachable, and leaves a store git fsck accepts', async () => {
    const { repo, commit, tree } = await repoWithCommit();
    const ledger = new VerificationLedger(repo);
    const written = record({ commit, tree });
    await ledger.write(written, 'gate log: 1 passed\n');
    expect(await ledger.read('e1-v1')).toEqual(written);
    expect(await ledger.readLog('e1-v1')).toBe('gate log: 1 passed\n');
    expect(await gitValue(['rev-parse', `${VERIFICATION_REF_PREFIX}e1-v1^1`], { cwd: repo })).toBe(commit);
    expect(await gitValue(['cat-file', '-p', `${VERIFICATION_REF_PREFIX}e1-v1:record.json`], { cwd: repo })).toBe(JSON.stringify(written, null, 2));
    await git(['fsck', '--strict', '--no-dangling'], { cwd: repo });
  });

  it('answers null for a verification it never wrote, and the latest record after a second write', async () => {
    const { repo, commit, tree } = await repoWithCommit();
    const ledger = new VerificationLedger(repo);
    expect(await ledger.read('nope-v1')).toBeNull();
    expect(await ledger.readLog('nope-v1')).toBeNull();
    await ledger.write(record({ commit, tree, ok: true }), 'first\n');
    await ledger.write(record({ commit, tree, ok: false, reason: 'tests-failed' }), 'second\n');
    expect(await ledger.read('e1-v1')).toMatchObject({ ok: false, reason: 'tests-failed' });
    expect(await ledger.readLog('e1-v1')).toBe('second\n');
  });
});
