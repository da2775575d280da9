import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

/** One response the server gives, as recorded: status, headers and the JSON body. */
export interface RecordedResponse {
  status?: number;
  headers?: Record<string, string>;
  body: unknown;
}

/** What the server checks of the request of one turn before answering it. */
export interface TurnExpectation {
  /** Role of the last message sent (user on the first turn, tool after tool calls). */
  lastRole?: 'user' | 'tool' | 'assistant';
  /** Text that must appear in one of the tool results sent back with this request. */
  toolResultIncludes?: string[];
}

/**
 * A recorded conversation: the first user message contains `match`; turn n (the count of
 * assistant messages in the request) is answered with its responses in order, the last one
 * repeated (so a 429 and then its retry are two responses of one turn).
 */
export interface RecordedConversation {
  match: string;
  turns: Array<{ expect?: TurnExpectation; responses: RecordedResponse[] }>;
}

export interface Recording {
  description: string;
  conversations: RecordedConversation[];
}

export interface ReplayServer {
  /** The API root to put in agent.baseUrl. */
  baseUrl: string;
  /** Every request, with when it arrived. */
  requests: Array<{ at: number; body: ChatRequestBody; authorization: string | undefined }>;
  /** Requests that did not match the recording, in words. Must stay empty. */
  mismatches: string[];
  close(): Promise<void>;
}

interface ChatRequestBody {
  model: string;
  messages: Array<{ role: string; content: string | null; tool_call_id?: string }>;
  tools?: Array<{ function: { name: string } }>;
}

export const RECORDINGS_DIR = join(import.meta.dirname, '..', '..', 'fixtures', 'agents', 'openai');

export async function loadRecording(name: string): Promise<Recording> {
  return JSON.parse(await readFile(join(RECORDINGS_DIR, `${name}.json`), 'utf8')) as Recording;
}

/**
 * A local server speaking the Chat Completions wire format (`POST /v1/chat/completions`), which
 * replays recorded exchanges. Stateless per turn (the turn is read from the request), so parallel
 * episodes of different tasks each follow their own conversation. `at`: where it listens, and the
 * host its baseUrl names (a docker agent reaches this host through its network's gateway).
 */
export async function startReplayServer(
  recording: Recording,
  at: { listen: string; host: string } = { listen: '127.0.0.1', host: '127.0.0.1' },
): Promise<ReplayServer> {
  const served = new Map<string, number>();
  const requests: ReplayServer['requests'] = [];
  const mismatches: string[] = [];
  const server = createServer(async (req, res) => {
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(body));
    };
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions')
      return send(404, { error: { message: `no route ${req.method} ${req.url}`, type: 'invalid_request_error', code: 'not_found' } });
    const body = JSON.parse(await readBody(req)) as ChatRequestBody;
    requests.push({ at: Date.now(), body, authorization: req.headers.authorization });
    const first = body.messages.find((m) => m.role === 'user')?.content ?? '';
    const conversation = recording.conversations.find((c) => first.includes(c.match));
    const turn = body.messages.filter((m) => m.role === 'assistant').length;
    const entry = conversation?.turns[turn];
    if (!conversation || !entry) {
      mismatches.push(`no recorded turn ${turn} for a conversation starting ${JSON.stringify(first.slice(0, 80))}`);
      return send(500, { error: { message: 'replay: nothing recorded for this request', type: 'server_error', code: 'replay_mismatch' } });
    }
    const problem = checkExpectation(body, entry.expect);
    if (problem) mismatches.push(`${conversation.match}, turn ${turn}: ${problem}`);
    const key = `${conversation.match}#${turn}`;
    const n = served.get(key) ?? 0;
    served.set(key, n + 1);
    const response = entry.responses[Math.min(n, entry.responses.length - 1)]!;
    send(response.status ?? 200, response.body, response.headers);
  });
  await new Promise<void>((resolve) => server.listen(0, at.listen, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://${at.host}:${port}/v1`,
    requests,
    mismatches,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function checkExpectation(body: ChatRequestBody, expect: TurnExpectation | undefined): string | null {
  if (!expect) return null;
  const last = body.messages.at(-1);
  if (expect.lastRole && last?.role !== expect.lastRole) return `expected the last message to be ${expect.lastRole}, got ${last?.role}`;
  const results = body.messages
    .slice(body.messages.findLastIndex((m) => m.role === 'assistant') + 1)
    .filter((m) => m.role === 'tool')
    .map((m) => m.content ?? '');
  for (const text of expect.toolResultIncludes ?? []) {
    if (!results.some((r) => r.includes(text))) return `expected a tool result containing ${JSON.stringify(text)}, got ${JSON.stringify(results)}`;
  }
  return null;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (text += chunk));
    req.on('end', () => resolve(text));
    req.on('error', reject);
  });
}
