import { git, gitValue } from '../git/git.js';
import { readText } from '../git/object-reader.js';
import { listRefs } from '../git/ref-list.js';

export const REVIEW_REF_PREFIX = 'refs/genesis/reviews/';

/** A person's decision on a change that passed its gate and waited for review. */
export interface ReviewDecision {
  version: 1;
  episode: string;
  decision: 'approve' | 'reject';
  /** Why; a rejection's note goes into the prompt of the task's next attempt. */
  note: string | null;
  /** ISO time of the decision. */
  at: string;
  /** Who decided, as the caller names them (`cli alice@host`, `dashboard 127.0.0.1`). */
  by: string | null;
}

/**
 * Records a decision as `refs/genesis/reviews/<episode>`: a commit whose tree holds `review.json`.
 * One ref per episode, created only if absent (update-ref with a zero old value), so of two people
 * deciding at once exactly one wins and the other is told; `git clone --mirror` carries it. Null when
 * the change was already decided.
 */
export async function writeReviewDecision(repo: string, input: Omit<ReviewDecision, 'version' | 'at'> & { now?: Date }): Promise<ReviewDecision | null> {
  const decision: ReviewDecision = {
    version: 1,
    episode: input.episode,
    decision: input.decision,
    note: input.note?.trim() || null,
    at: (input.now ?? new Date()).toISOString(),
    by: input.by,
  };
  const blob = await gitValue(['hash-object', '-w', '--stdin'], { cwd: repo, input: `${JSON.stringify(decision, null, 2)}\n` });
  const tree = await gitValue(['mktree'], { cwd: repo, input: `100644 blob ${blob}\treview.json\n` });
  const commit = await gitValue(['commit-tree', tree], { cwd: repo, input: `${decision.decision} episode ${decision.episode}\n` });
  try {
    await git(['update-ref', `${REVIEW_REF_PREFIX}${decision.episode}`, commit, '0'.repeat(40)], { cwd: repo });
  } catch {
    if ((await readReviewDecisions(repo)).has(decision.episode)) return null;
    throw new Error(`the decision on episode ${decision.episode} could not be recorded`);
  }
  return decision;
}

/** Every decision of the world, by episode. No git process: refs from the ref store, decisions through the world's cat-file. */
export async function readReviewDecisions(repo: string): Promise<Map<string, ReviewDecision>> {
  const listed = await listRefs(repo, REVIEW_REF_PREFIX);
  const texts = await Promise.all(listed.map((r) => readText(repo, `${r.sha}:review.json`)));
  const out = new Map<string, ReviewDecision>();
  texts.forEach((text) => {
    if (!text) return;
    try {
      const parsed = JSON.parse(text) as Partial<ReviewDecision>;
      if (typeof parsed.episode === 'string' && (parsed.decision === 'approve' || parsed.decision === 'reject'))
        out.set(parsed.episode, {
          version: 1,
          episode: parsed.episode,
          decision: parsed.decision,
          note: parsed.note ?? null,
          at: parsed.at ?? '',
          by: parsed.by ?? null,
        });
    } catch {
      // A decision written by hand and got wrong is skipped (the change keeps waiting) rather than taking the run down.
    }
  });
  return out;
}
