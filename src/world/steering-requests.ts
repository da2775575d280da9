import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { git, gitValue } from '../git/git.js';
import { readText } from '../git/object-reader.js';
import { listRefs } from '../git/ref-list.js';

export const STEERING_REQUEST_PREFIX = 'refs/genesis/steering/requests/';
export const STEERING_ANSWER_PREFIX = 'refs/genesis/steering/answers/';

/** What a person asks of a running world: land an amendment, add a task, reopen a done task. */
export type SteeringRequest = {
  version: 1;
  id: string;
  /** Who asks, for the record (`cli alice@host`). */
  by: string;
  at: string;
  /** The process that waits for the answer. */
  from: { host: string; pid: number };
} & (
  | {
      kind: 'amend';
      /** The amended tree, already in the world's object store (the request's commit keeps it reachable). */
      tree: string;
      /** The accepted commit the amendment was made on: what landed since is merged in, never undone (unless `force`). */
      base: string;
      message: string;
      /** Where the tree came from, for messages. */
      source: string;
      force: boolean;
    }
  | { kind: 'add-task'; task: Record<string, unknown> }
  | { kind: 'reopen'; task: string; reason: string }
);

export type SteeringRequestInput = SteeringRequest extends infer R ? (R extends SteeringRequest ? Omit<R, 'version' | 'id' | 'at' | 'from'> : never) : never;

/** The scheduler's answer: `taken` once it claimed the request, `done` with what came of it. */
export interface SteeringAnswer {
  version: 1;
  id: string;
  state: 'taken' | 'done';
  /** The scheduler that took it (host:pid). */
  by: string;
  at: string;
  /** With `done`: what came of it, as the operation's outcome (JSON: a result, or the error it refused with). */
  outcome?: unknown;
}

/** A request as it waits in the world. */
export interface PendingSteering {
  ref: string;
  sha: string;
  request: SteeringRequest;
}

/**
 * Leaves a request for the running scheduler as `refs/genesis/steering/requests/<id>`: a commit
 * whose tree holds `request.json` (and, for an amendment, the amended tree, so no gc takes it while
 * it waits). A ref, like the ledger's, needs no lock, and the scheduler polls the ref store without
 * a git process.
 */
export async function writeSteeringRequest(repo: string, input: SteeringRequestInput, now = new Date()): Promise<PendingSteering> {
  const id = `${now.toISOString().replace(/[-:]/g, '').replace('T', '-').replace('.', '-').replace('Z', '')}-${randomBytes(3).toString('hex')}`;
  const request = { ...input, version: 1, id, at: now.toISOString(), from: { host: hostname(), pid: process.pid } } as SteeringRequest;
  const blob = await gitValue(['hash-object', '-w', '--stdin'], { cwd: repo, input: `${JSON.stringify(request, null, 2)}\n` });
  const entries = [`100644 blob ${blob}\trequest.json`, ...(request.kind === 'amend' ? [`040000 tree ${request.tree}\ttree`] : [])];
  const tree = await gitValue(['mktree'], { cwd: repo, input: `${entries.join('\n')}\n` });
  const commit = await gitValue(['commit-tree', tree], { cwd: repo, input: `steering: ${request.kind} by ${request.by}\n` });
  const ref = `${STEERING_REQUEST_PREFIX}${id}`;
  await git(['update-ref', ref, commit, '0'.repeat(40)], { cwd: repo });
  return { ref, sha: commit, request };
}

/** The requests waiting, oldest first (their ids sort by time). One that does not read is skipped. */
export async function listSteeringRequests(repo: string): Promise<PendingSteering[]> {
  const listed = await listRefs(repo, STEERING_REQUEST_PREFIX);
  const out: PendingSteering[] = [];
  for (const { ref, sha } of listed) {
    const text = await readText(repo, `${sha}:request.json`);
    try {
      const request = JSON.parse(text ?? '') as SteeringRequest;
      if (request.version === 1 && typeof request.id === 'string' && typeof request.kind === 'string') out.push({ ref, sha, request });
    } catch {
      // A ref someone wrote by hand: not a request.
    }
  }
  return out;
}

/**
 * Takes a request away from the world by compare-and-swap: exactly one of the scheduler (claiming
 * it) and the waiting process (withdrawing it) wins. False when the other one already did.
 */
export async function takeSteeringRequest(repo: string, pending: Pick<PendingSteering, 'ref' | 'sha'>): Promise<boolean> {
  const r = await git(['update-ref', '-d', pending.ref, pending.sha], { cwd: repo, okExitCodes: [1, 128] });
  return r.exitCode === 0;
}

export async function writeSteeringAnswer(repo: string, answer: SteeringAnswer): Promise<void> {
  const blob = await gitValue(['hash-object', '-w', '--stdin'], { cwd: repo, input: `${JSON.stringify(answer, null, 2)}\n` });
  const tree = await gitValue(['mktree'], { cwd: repo, input: `100644 blob ${blob}\tanswer.json\n` });
  const commit = await gitValue(['commit-tree', tree], { cwd: repo, input: `steering: ${answer.state} ${answer.id}\n` });
  await git(['update-ref', `${STEERING_ANSWER_PREFIX}${answer.id}`, commit], { cwd: repo });
}

export async function readSteeringAnswer(repo: string, id: string): Promise<SteeringAnswer | null> {
  const text = await readText(repo, `${STEERING_ANSWER_PREFIX}${id}:answer.json`);
  if (text === null) return null;
  try {
    return JSON.parse(text) as SteeringAnswer;
  } catch {
    return null;
  }
}

/** The waiting process read the answer: it goes. */
export async function removeSteeringAnswer(repo: string, id: string): Promise<void> {
  await git(['update-ref', '-d', `${STEERING_ANSWER_PREFIX}${id}`], { cwd: repo, okExitCodes: [1, 128] });
}
