import { git, gitValue } from '../world/git.js';
import type { GateRecord } from '../world/episode-record.js';
import { VERIFICATION_REF_PREFIX } from '../world/verification-ref.js';

export { VERIFICATION_REF_PREFIX };

/** What a verification found, as its verifier wrote it into the world. */
export interface VerificationRecord {
  version: 1;
  verificationId: string;
  episodeId: string;
  /** The speculative commit verified, its tree, and the commit it extends. */
  commit: string;
  tree: string;
  onto: string;
  ok: boolean;
  reason: string | null;
  message: string | null;
  signature: string | null;
  gate: GateRecord | null;
  worker: string;
  endedAt: string;
}

/**
 * Verifications in the world's ledger: one ref per verification, pointing at a commit whose
 * parent is the speculative commit (so it stays reachable) and whose tree holds `record.json` and
 * the gate's log. The lander lands a speculative commit only when the record here names that very
 * commit and its tree as passed: a message on the queue claiming a pass is a hint, never the proof.
 */
export class VerificationLedger {
  constructor(private readonly repo: string) {}

  async write(record: VerificationRecord, log: string): Promise<void> {
    const [json, gateLog] = await Promise.all([
      gitValue(['hash-object', '-w', '--stdin'], { cwd: this.repo, input: `${JSON.stringify(record, null, 2)}\n` }),
      gitValue(['hash-object', '-w', '--stdin'], { cwd: this.repo, input: log }),
    ]);
    const tree = await gitValue(['mktree'], { cwd: this.repo, input: `100644 blob ${gateLog}\tgate.log\n100644 blob ${json}\trecord.json\n` });
    const commit = await gitValue(['commit-tree', tree, '-p', record.commit], {
      cwd: this.repo,
      input: `verification ${record.verificationId}: ${record.ok ? 'passed' : record.reason}\n`,
    });
    await git(['update-ref', `${VERIFICATION_REF_PREFIX}${record.verificationId}`, commit], { cwd: this.repo });
  }

  async read(verificationId: string): Promise<VerificationRecord | null> {
    const r = await git(['cat-file', 'blob', `${VERIFICATION_REF_PREFIX}${verificationId}:record.json`], { cwd: this.repo, okExitCodes: [128] });
    if (r.exitCode !== 0) return null;
    try {
      return JSON.parse(r.stdout) as VerificationRecord;
    } catch {
      return null;
    }
  }

  async readLog(verificationId: string): Promise<string | null> {
    const r = await git(['cat-file', 'blob', `${VERIFICATION_REF_PREFIX}${verificationId}:gate.log`], { cwd: this.repo, okExitCodes: [128] });
    return r.exitCode === 0 ? r.stdout : null;
  }
}
