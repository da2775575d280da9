/** One model call as the episode's record keeps it. */
export interface RecordedCall {
  at: string;
  method: string;
  /** The path the agent asked for (its query without any key). */
  path: string;
  api: string;
  model: string | null;
  status: number | null;
  /** What ended the call other than its own end: the gateway's refusal, a stall, a cut stream, an unreachable model. */
  problem?: string;
  durationMs: number;
  /** Time to the first byte of the answer. */
  firstByteMs: number | null;
  tokens: { input: number; output: number; cached: number; reasoning: number } | null;
  costUsd: number | null;
  request?: string;
  response?: string;
  /** Bytes of the request or response not kept. */
  truncated?: { request: number; response: number };
}

/** What one call's request and response may keep, and what the whole conversation may. */
const PER_BODY_CHARS = 64 * 1024;
const PER_EPISODE_CHARS = 4 * 1024 * 1024;

/**
 * The conversation of one episode, bounded: each request and response up to a size, the whole up
 * to another (past it, calls keep their figures and lose their bodies). Each request of an agent
 * carries the whole conversation so far, so keeping every one in full would grow as its square.
 */
export class Conversation {
  readonly calls: RecordedCall[] = [];
  private kept = 0;

  add(call: Omit<RecordedCall, 'request' | 'response' | 'truncated'>, request: string, response: string): void {
    const room = Math.max(0, PER_EPISODE_CHARS - this.kept);
    const req = request.slice(0, Math.min(PER_BODY_CHARS, room));
    const res = response.slice(0, Math.min(PER_BODY_CHARS, Math.max(0, room - req.length)));
    this.kept += req.length + res.length;
    const truncated = { request: request.length - req.length, response: response.length - res.length };
    this.calls.push({
      ...call,
      ...(req ? { request: req } : {}),
      ...(res ? { response: res } : {}),
      ...(truncated.request > 0 || truncated.response > 0 ? { truncated } : {}),
    });
  }

  toJSON(): { calls: RecordedCall[] } {
    return { calls: this.calls };
  }
}
