import { GenesisError } from '../../errors/genesis-error.js';
import type { GateRecord } from '../../ledger/episode-record.js';
import { readText } from '../../git/object-reader.js';
import { writeCommit, writeObject, writeTree } from '../../git/object-writer.js';
import { updateRefs } from '../../git/ref-updates.js';
import { VERIFICATION_REF_PREFIX } from '../../world/history/verification-ref.js';
import type { WorldRepo } from '../../world/world-repo.js';

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
/** The verification records of a world, in its repository. */
export function verificationLedgerOf(world: Pick<WorldRepo, 'path'>): VerificationLedger {
  return new VerificationLedger(world.path);
}

export class VerificationLedger {
  constructor(private readonly repo: string) {}

  /** No git process: the objects go into the store directly and the ref through the world's long-lived `update-ref --stdin`. */
  async write(record: VerificationRecord, log: string): Promise<void> {
    const [json, gateLog] = await Promise.all([
      writeObject(this.repo, 'blob', Buffer.from(`${JSON.stringify(record, null, 2)}\n`)),
      writeObject(this.repo, 'blob', Buffer.from(log)),
    ]);
    const tree = await writeTree(this.repo, [
      { mode: '100644', name: 'gate.log', sha: gateLog },
      { mode: '100644', name: 'record.json', sha: json },
    ]);
    const commit = await writeCommit(this.repo, {
      tree,
      parents: [record.commit],
      message: `verification ${record.verificationId}: ${record.ok ? 'passed' : record.reason}\n`,
    });
    const moved = await updateRefs(this.repo, [{ ref: `${VERIFICATION_REF_PREFIX}${record.verificationId}`, next: commit }]);
    if (!moved.ok)
      throw new GenesisError('git-failed', `could not record verification ${record.verificationId}: ${moved.error}`, {
        hint: 'check that the world is a git repository you can write to',
      });
  }

  /** Through the world's long-lived `cat-file --batch`: no process per read. */
  async read(verificationId: string): Promise<VerificationRecord | null> {
    const text = await readText(this.repo, `${VERIFICATION_REF_PREFIX}${verificationId}:record.json`);
    if (text === null) return null;
    try {
      return JSON.parse(text) as VerificationRecord;
    } catch {
      return null;
    }
  }

  readLog(verificationId: string): Promise<string | null> {
    return readText(this.repo, `${VERIFICATION_REF_PREFIX}${verificationId}:gate.log`);
  }
}
