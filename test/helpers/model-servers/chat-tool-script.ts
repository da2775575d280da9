import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One tool call the scripted model makes: a tool of the `openai` agent and its arguments. */
export interface ScriptedCall {
  name: string;
  args: Record<string, unknown>;
}

export interface ToolScriptServer {
  /** The API root to give the agent (agent.baseUrl). */
  baseUrl: string;
  /** What each tool answered, in the order the calls were made (the `tool` messages the model was sent). */
  toolResults(): string[];
  /** Resolves once the model has handed out call number `index` (from 0). */
  handedOut(index: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * A Chat Completions server (non-streamed, as the `openai` agent calls it) that plays a fixed
 * script of tool calls, one per turn, whatever the tools answered, then calls `finish`. The turn
 * is read from the request (its count of assistant messages), so a retried request gets the same
 * call. `at`: where it listens and the host its baseUrl names (a docker agent reaches this host
 * through its network's gateway).
 */
export async function startToolScriptServer(
  script: readonly ScriptedCall[],
  at: { listen: string; host: string } = { listen: '127.0.0.1', host: '127.0.0.1' },
): Promise<ToolScriptServer> {
  let results: string[] = [];
  const waiters = new Map<number, Array<() => void>>();
  let handed = -1;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { messages?: Array<{ role: string; content?: string }> };
      const messages = body.messages ?? [];
      results = messages.filter((m) => m.role === 'tool').map((m) => m.content ?? '');
      const turn = messages.filter((m) => m.role === 'assistant').length;
      const call = script[turn] ?? { name: 'finish', args: { summary: 'done' } };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: `chatcmpl-${turn}`,
          object: 'chat.completion',
          choices: [
            {
              index: 0,
              finish_reason: 'tool_calls',
              message: {
                role: 'assistant',
                content: null,
                tool_calls: [{ id: `call_${turn}`, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.args) } }],
              },
            },
          ],
          usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 },
        }),
      );
      for (let i = handed + 1; i <= turn; i++) for (const wake of waiters.get(i) ?? []) wake();
      handed = Math.max(handed, turn);
    });
  });
  server.listen(0, at.listen);
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://${at.host}:${port}/v1`,
    toolResults: () => results,
    handedOut: (index) =>
      index <= handed
        ? Promise.resolve()
        : new Promise((resolve) => {
            waiters.set(index, [...(waiters.get(index) ?? []), resolve]);
          }),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
