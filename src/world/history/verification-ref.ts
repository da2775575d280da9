import { git } from '../../git/git.js';

/** Where a world keeps its verification records: one ref per verification of a speculative commit. */
export const VERIFICATION_REF_PREFIX = 'refs/genesis/verifications/';

/**
 * The score a passing verification recorded for the commit it verified, or null. A commit verified
 * on a speculative tip carries no Genesis-Score trailer (its message was written before its gate
 * ran, so that this very commit can land), so its score lives here.
 */
export async function readVerifiedScore(repo: string, verificationId: string): Promise<number | null> {
  const r = await git(['cat-file', 'blob', `${VERIFICATION_REF_PREFIX}${verificationId}:record.json`], { cwd: repo, okExitCodes: [128] });
  if (r.exitCode !== 0) return null;
  try {
    const record = JSON.parse(r.stdout) as { ok?: boolean; gate?: { score?: number | null } | null };
    return record.ok === true && typeof record.gate?.score === 'number' ? record.gate.score : null;
  } catch {
    return null;
  }
}

/** The gate summary a verification record holds, or null when there is no such record. */
export async function readVerificationSummary(repo: string, verificationId: string): Promise<string | null> {
  const r = await git(['cat-file', 'blob', `${VERIFICATION_REF_PREFIX}${verificationId}:record.json`], { cwd: repo, okExitCodes: [128] });
  if (r.exitCode !== 0) return null;
  try {
    const summary = (JSON.parse(r.stdout) as { gate?: { summary?: unknown } | null }).gate?.summary;
    return typeof summary === 'string' ? summary : null;
  } catch {
    return null;
  }
}
