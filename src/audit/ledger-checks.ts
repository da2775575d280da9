import type { EpisodeRecord } from '../ledger/episode-record.js';
import { short, violation, warning, type AuditFinding } from './audit-finding.js';
import type { AuditedCommit } from './read-history.js';
import type { LedgerEntry } from './read-ledger.js';

/**
 * Each commit with a Genesis-Episode trailer against its ledger record: the record exists, is
 * final and accepted, passed its gate, names this very commit, and agrees with the trailers; a
 * change that landed as it was verified has the tree of its candidate (a replayed one was verified
 * again on the new head, so its tree may differ). Pure.
 */
export function checkCommitsAgainstLedger(
  commits: readonly AuditedCommit[],
  records: ReadonlyMap<string, EpisodeRecord>,
  candidateTrees: ReadonlyMap<string, string | null>,
): AuditFinding[] {
  const findings: AuditFinding[] = [];
  for (const c of commits) {
    if (!c.episode) continue;
    const where = { commit: c.commit, episode: c.episode };
    const r = records.get(c.episode);
    if (!r) {
      findings.push(
        violation('no-ledger-record', `commit ${short(c.commit)} names episode ${c.episode}, which has no ledger record`, {
          ...where,
          hint: 'the ledger (refs/genesis/episodes/*) must travel with the world: fetch or restore it',
        }),
      );
      continue;
    }
    const wrong = recordProblems(c, r);
    if (wrong.length > 0) {
      findings.push(violation('ledger-mismatch', `commit ${short(c.commit)} and the record of episode ${c.episode} disagree: ${wrong.join('; ')}`, where));
    }
    // A change verified again on a newer tip names the tree that verification passed: it must be this commit's.
    if (r.verification && c.tree && r.verification.tree !== c.tree) {
      findings.push(
        violation(
          'tree-differs-from-candidate',
          `commit ${short(c.commit)} does not hold the tree verification ${r.verification.id} passed (${short(r.verification.tree)})`,
          where,
        ),
      );
    }
    const candidateTree = r.candidate ? candidateTrees.get(r.candidate) : null;
    if (r.reason !== 'replayed' && candidateTree && c.tree && candidateTree !== c.tree) {
      findings.push(
        violation(
          'tree-differs-from-candidate',
          `commit ${short(c.commit)} does not hold the tree episode ${c.episode} verified (candidate ${short(r.candidate!)})`,
          where,
        ),
      );
    }
  }
  return findings;
}

function recordProblems(c: AuditedCommit, r: EpisodeRecord): string[] {
  const wrong: string[] = [];
  if (r.status !== 'final') wrong.push(`the record is still ${r.status}`);
  if (r.outcome !== 'accepted') wrong.push(`the record's outcome is ${r.outcome ?? 'none'}, not accepted`);
  if (r.gate?.ok !== true) wrong.push(r.gate ? 'its gate did not pass' : 'it has no gate verdict');
  if (r.commit !== c.commit) wrong.push(`the record names commit ${r.commit ? short(r.commit) : 'none'}`);
  if (c.task !== null && r.task !== c.task) wrong.push(`Genesis-Task is ${c.task}, the record's task ${r.task}`);
  if (c.attempt !== null && r.attempt !== c.attempt) wrong.push(`Genesis-Attempt is ${c.attempt}, the record's attempt ${r.attempt}`);
  // The trailer keeps the millionth of a dollar: it agrees when the record rounds to it.
  const cost = r.usage?.costUsd ?? null;
  if (c.cost !== null && c.cost !== undefined && (cost === null || Math.abs(Math.round(cost * 1e6) - Math.round(c.cost * 1e6)) > 0))
    wrong.push(`Genesis-Cost is ${c.cost} USD, the record's cost ${cost === null ? 'unknown' : `${cost} USD`}`);
  return wrong;
}

/**
 * The ledger on its own: every record readable and ending in a final outcome, every accepted
 * record's commit on the branch. Records still `running` are expected while a run holds the
 * world; otherwise that run died and the next `genesis run` closes them as abandoned. Pure.
 */
export function checkLedgerOutcomes(entries: readonly LedgerEntry[], onBranch: ReadonlySet<string>, runHolder: string | null): AuditFinding[] {
  const findings: AuditFinding[] = [];
  const open: string[] = [];
  for (const { id, record: r, problem } of entries) {
    if (!r) {
      findings.push(violation('ledger-record-unreadable', `the ledger record of episode ${id} cannot be read: ${problem}`, { episode: id }));
      continue;
    }
    if (r.status === 'running') {
      open.push(id);
      continue;
    }
    if (r.status !== 'final' || r.outcome === null || !['accepted', 'rejected', 'failed', 'abandoned', 'outrun'].includes(r.outcome)) {
      findings.push(
        violation(
          'episode-not-final',
          `episode ${id} has status ${r.status} and outcome ${r.outcome ?? 'none'}; a closed episode must end accepted, rejected, failed, abandoned or outrun`,
          { episode: id },
        ),
      );
      continue;
    }
    if (r.outcome === 'accepted' && (!r.commit || !onBranch.has(r.commit))) {
      findings.push(
        violation(
          'accepted-not-on-branch',
          `episode ${id} is recorded as accepted as ${r.commit ? short(r.commit) : 'no commit'}, which is not on the accepted branch`,
          {
            episode: id,
            hint: 'the branch was moved back or rewritten after this episode landed',
          },
        ),
      );
    }
  }
  if (open.length > 0 && runHolder === null) {
    findings.push(
      warning('episode-open', `${open.length} episode(s) still recorded as running, and no run holds the world: ${listFew(open)}`, {
        episode: open[0],
        hint: 'their run stopped without closing them; `genesis run` closes them as abandoned when it starts',
      }),
    );
  }
  return findings;
}

function listFew(ids: readonly string[]): string {
  return ids.length <= 3 ? ids.join(', ') : `${ids.slice(0, 3).join(', ')} and ${ids.length - 3} more`;
}
