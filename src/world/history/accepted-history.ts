import { GenesisError } from '../../errors/genesis-error.js';
import { formatCommitMessage, hasSeparator, parseCommitMessage } from '../commit-message.js';
import { HistoryIndex, historyIndexFile } from './history-index.js';
import { resolveObject } from '../../git/object-reader.js';
import { readFirstParentCommits, type RawCommit } from '../../git/read-commits.js';
import { readVerifiedScore } from './verification-ref.js';

export const TRAILERS = {
  episode: 'Genesis-Episode',
  task: 'Genesis-Task',
  attempt: 'Genesis-Attempt',
  agent: 'Genesis-Agent',
  verified: 'Genesis-Verified',
  score: 'Genesis-Score',
  /** A person's change made with `genesis amend`: names what the person changed. */
  amend: 'Genesis-Amend',
  /** A done task made pending again (`genesis task reopen`): its acceptance changed, its work is to be done again. */
  reopen: 'Genesis-Reopen',
  tree: 'Genesis-Tree',
  verification: 'Genesis-Verification',
  /** What the agent of the episode that made the change reported it cost, in US dollars (`0.0123 USD`); absent when it reported none. */
  cost: 'Genesis-Cost',
  /** The commit that adds world.yaml to an adopted repository: names the repository's head it continues. */
  adopted: 'Genesis-Adopted',
} as const;

export interface AcceptedCommit {
  commit: string;
  parents: string[];
  date: string;
  subject: string;
  /** Null for commits that did not come from an episode (the world's first commit). */
  episode: string | null;
  task: string | null;
  attempt: number | null;
  agent: string | null;
  verified: string | null;
  /** Tests passing at this commit, where the gate could count them (ratchet worlds always). */
  score: number | null;
  /** The Genesis-Amend trailer of a commit made by `genesis amend` (absent or null otherwise). */
  amend?: string | null;
  /** The task a `genesis task reopen` commit made pending again (absent or null otherwise). */
  reopen?: string | null;
  /** The verification behind the commit (the episode's id when its own gate passed this very tree), if named. */
  verification?: string | null;
  /** The Genesis-Cost trailer in dollars, or null without one. */
  cost?: number | null;
  /** True when the message holds a control character other than a newline or tab: Genesis never writes one. */
  separator?: boolean;
}

/**
 * The accepted branch, newest first, with each commit's Genesis trailers. `at` reads the history
 * as it was at an earlier accepted commit instead of the branch's tip (or a range `a..b`).
 * Each commit is read from its object (read-commits.ts) and its trailers from the final
 * paragraph Genesis wrote (commit-message.ts), so nothing in a subject or body adds or hides one.
 */
export async function readAcceptedHistory(repo: string, branch: string, at?: string): Promise<AcceptedCommit[]> {
  return (await readFirstParentCommits(repo, at ?? `refs/heads/${branch}`)).map(toAccepted);
}

/** A commit's fields and the Genesis trailers of its message. */
export function toAccepted(raw: RawCommit): AcceptedCommit {
  const { subject, trailers } = parseCommitMessage(raw.message);
  const attempt = numberOf(trailers.get(TRAILERS.attempt));
  const score = numberOf(trailers.get(TRAILERS.score));
  return {
    commit: raw.commit,
    parents: raw.parents,
    date: raw.date,
    subject,
    episode: trailers.get(TRAILERS.episode) ?? null,
    task: trailers.get(TRAILERS.task) ?? null,
    attempt,
    agent: trailers.get(TRAILERS.agent) ?? null,
    verified: trailers.get(TRAILERS.verified) ?? null,
    score,
    amend: trailers.get(TRAILERS.amend) ?? null,
    reopen: trailers.get(TRAILERS.reopen) ?? null,
    verification: trailers.get(TRAILERS.verification) ?? null,
    cost: costOf(trailers.get(TRAILERS.cost)),
    ...(hasSeparator(raw.message) ? { separator: true } : {}),
  };
}

/** A trailer's number, or null when it holds none (a number is all Genesis writes there). */
function numberOf(text: string | undefined): number | null {
  return text !== undefined && /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : null;
}

/** A Genesis-Cost value: dollars, to the millionth, never in exponent notation. */
export function formatCostTrailer(costUsd: number): string {
  return `${costUsd.toFixed(6).replace(/0+$/, '').replace(/\.$/, '.0')} USD`;
}

function costOf(text: string | undefined): number | null {
  const match = text === undefined ? null : /^(\d+(\.\d+)?) USD$/.exec(text);
  return match ? Number(match[1]) : null;
}

/** Formats the commit message of an accepted change, trailers last so `git log` shows them. */
export function acceptedCommitMessage(fields: {
  title: string;
  episode: string;
  task: string;
  attempt: number;
  agent: string;
  verified: string;
  score?: number | null;
  costUsd?: number | null;
  tree?: string;
  verification?: string;
}): string {
  return formatCommitMessage(`${fields.task}: ${fields.title}`, '', [
    [TRAILERS.episode, fields.episode],
    [TRAILERS.task, fields.task],
    [TRAILERS.attempt, String(fields.attempt)],
    [TRAILERS.agent, fields.agent],
    [TRAILERS.verified, fields.verified],
    ...(fields.score === undefined || fields.score === null ? [] : [[TRAILERS.score, String(fields.score)] as const]),
    ...(fields.costUsd === undefined || fields.costUsd === null ? [] : [[TRAILERS.cost, formatCostTrailer(fields.costUsd)] as const]),
    // The tree that passed the gate and the verification that passed it (the episode's own gate, or one on the tip).
    ...(fields.tree ? [[TRAILERS.tree, fields.tree] as const] : []),
    ...(fields.verification ? [[TRAILERS.verification, fields.verification] as const] : []),
  ]);
}

/**
 * The score of the newest accepted commit at `at` that has one (0 when none has): its
 * Genesis-Score trailer, or for a commit verified again on a speculative tip, the score its
 * verification recorded. From the history index: no walk of the whole history.
 */
export async function readHeadScore(repo: string, branch: string, at?: string): Promise<number> {
  const index = await historyIndexOf(repo);
  for await (const commit of index.chain(await commitOf(repo, branch, at))) {
    const score = await scoreOf(repo, commit);
    if (score !== null) return score;
  }
  return 0;
}

/**
 * A commit's ratchet score: its Genesis-Score trailer, or, for a change whose trailer was written
 * before the gate on its tip ran (it names that verification instead), the score the verification
 * recorded. Null when neither holds one.
 */
export async function scoreOf(repo: string, commit: { score?: number | null; verification?: string | null; episode?: string | null }): Promise<number | null> {
  if (commit.score !== null && commit.score !== undefined) return commit.score;
  return commit.verification && commit.verification !== commit.episode ? readVerifiedScore(repo, commit.verification) : null;
}

/**
 * Ids of the tasks done at a commit of the accepted history (or at the branch's tip): from the
 * history index (history-index.ts), which reads only the commits it has not seen yet, so the cost
 * of an episode does not grow with the age of the world.
 */
export async function readDoneTasks(repo: string, branch: string, at?: string): Promise<Set<string>> {
  const index = await historyIndexOf(repo);
  return index.doneAt(await commitOf(repo, branch, at));
}

/** The full object id `at` (or the branch's tip) names. */
async function commitOf(repo: string, branch: string, at?: string): Promise<string> {
  const name = at ?? `refs/heads/${branch}`;
  const found = await resolveObject(repo, `${name}^{commit}`);
  if (!found)
    throw new GenesisError('world-no-branch', `${at ? `commit ${at}` : `the branch "${branch}"`} is not in the world`, {
      hint: 'check `branch:` in world.yaml, or re-create the world with genesis init',
    });
  return found.sha;
}

const indexes = new Map<string, Promise<HistoryIndex>>();

/** The repository's history index, loaded once per process (the last 32 repositories used are kept). */
export function historyIndexOf(repo: string): Promise<HistoryIndex> {
  let index = indexes.get(repo);
  if (index !== undefined) {
    indexes.delete(repo);
  } else {
    index = (async () => {
      const loaded = new HistoryIndex((rev) => readAcceptedHistory(repo, '', rev), await historyIndexFile(repo));
      await loaded.load();
      return loaded;
    })();
    if (indexes.size >= 32) indexes.delete(indexes.keys().next().value!);
  }
  indexes.set(repo, index);
  return index;
}

/**
 * Tells the repository's history index, when this process has loaded one, about a commit Genesis
 * just wrote there (a speculative commit that lands as it is): see HistoryIndex.learn.
 */
export async function learnWrittenCommit(repo: string, raw: RawCommit): Promise<void> {
  const index = indexes.get(repo);
  if (index !== undefined) await (await index).learn(toAccepted(raw));
}

/** Accepted commits after `since` (exclusive), newest first: the only place a change based on it can have landed. */
export async function readAcceptedSince(repo: string, branch: string, since: string): Promise<AcceptedCommit[]> {
  return readAcceptedHistory(repo, branch, `${since}..refs/heads/${branch}`);
}
