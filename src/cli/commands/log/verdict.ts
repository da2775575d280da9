import type { Ledger } from '../../../ledger/ledger.js';
import type { AcceptedCommit } from '../../../world/history/accepted-history.js';
import type { WorldRepo } from '../../../world/world-repo.js';

/**
 * The gate summary of the verdict a commit landed on. A commit gated on its place in the
 * integration queue had its trailer written before that gate ran: the trailer names the
 * verification (a record of its own) or the episode (whose record holds its gate), and that record
 * holds the verdict. Commits no queue gated (init, amend, task add) carry it in the trailer itself.
 */
export async function landedVerdict(
  world: Pick<WorldRepo, 'verificationSummary'>,
  ledger: Pick<Ledger, 'read'>,
  commit: AcceptedCommit,
): Promise<string | null> {
  if (commit.verification && commit.verification !== commit.episode) {
    const summary = await world.verificationSummary(commit.verification);
    if (summary) return summary;
  }
  if (commit.episode && (!commit.verified || commit.verified.includes('its record holds the verdict') || commit.verification === commit.episode)) {
    const own = (await ledger.read(commit.episode))?.gate?.summary;
    if (own) return own;
  }
  return commit.verified;
}
