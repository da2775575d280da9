import {
  modeOfCall,
  nextUsage,
  sendJson,
  startScriptedServer,
  startSse,
  writeEvent,
  type Exchange,
  type ScriptedServer,
  type ServerMode,
} from './scripted-server.js';
import { workspacePath } from './workspace-path.js';

/**
 * Anthropic's Messages API as Claude Code calls it (`POST /v1/messages?beta=true`, streamed):
 * a working turn is answered with a `Write` tool call (a `Bash` call when the server has a
 * command), the turn that carries its `tool_result` with a final text; a call without tools (a title, a check) with a short text. Usage is reported in
 * `message_start` (input) and `message_delta` (output), as the real API does.
 */
export function startAnthropicServer(options: { mode?: ServerMode; tls?: { key: string; cert: string } } = {}): Promise<ScriptedServer> {
  return startScriptedServer(handleAnthropic, options);
}

function handleAnthropic(x: Exchange): unknown {
  const { res, url, json, server } = x;
  if (!url.pathname.endsWith('/v1/messages')) {
    if (url.pathname.endsWith('/count_tokens')) return sendJson(res, 200, { input_tokens: 1000 });
    return sendJson(res, 404, { type: 'error', error: { type: 'not_found_error', message: `no route ${url.pathname}` } });
  }
  if (refuse(x)) return;
  const tools = Array.isArray(json.tools) && json.tools.length > 0;
  const messages = Array.isArray(json.messages) ? json.messages : [];
  const answered = JSON.stringify(messages.at(-1) ?? {}).includes('"tool_result"');
  const usage = nextUsage(server, tools);
  const model = typeof json.model === 'string' ? json.model : 'claude-scripted';
  const write = tools && !answered;
  const block = write ? toolUse(x) : { type: 'text' as const, text: tools ? server.say : 'Scripted title' };
  const stop = write ? 'tool_use' : 'end_turn';
  const start = { id: `msg_${server.sent.length}`, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null };
  const startUsage = { input_tokens: usage.input, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  if (json.stream !== true) {
    return sendJson(res, 200, { ...start, content: [block], stop_reason: stop, usage: { ...startUsage, output_tokens: usage.output } });
  }
  startSse(res);
  writeEvent(res, { type: 'message_start', message: { ...start, usage: startUsage } }, 'message_start');
  if (block.type === 'tool_use') {
    writeEvent(res, { type: 'content_block_start', index: 0, content_block: { ...block, input: {} } }, 'content_block_start');
    const input = JSON.stringify(block.input);
    const half = Math.floor(input.length / 2);
    for (const part of [input.slice(0, half), input.slice(half)]) {
      writeEvent(res, { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: part } }, 'content_block_delta');
    }
  } else {
    writeEvent(res, { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, 'content_block_start');
    writeEvent(res, { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: block.text } }, 'content_block_delta');
  }
  writeEvent(res, { type: 'content_block_stop', index: 0 }, 'content_block_stop');
  writeEvent(res, { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: usage.output } }, 'message_delta');
  writeEvent(res, { type: 'message_stop' }, 'message_stop');
  res.end();
}

/** The working turn's tool call: Claude Code's own Bash tool running the server's command, else its Write tool writing the file. */
function toolUse({ body, server }: Exchange): { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> } {
  const id = `toolu_${server.sent.length}`;
  if (server.command !== null) return { type: 'tool_use', id, name: 'Bash', input: { command: server.command, description: 'Run the script' } };
  return { type: 'tool_use', id, name: 'Write', input: { file_path: workspacePath(body, server.file.path), content: server.file.content } };
}

/** The refusals of the failure modes, as api.anthropic.com words them; true when it refused. */
function refuse({ res, server }: Exchange): boolean {
  const mode = modeOfCall(server);
  if (mode === 'auth') {
    sendJson(res, 401, { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } });
  } else if (mode === 'usage-limit') {
    const reset = new Date(Date.now() + server.resetAfterSec * 1000);
    sendJson(
      res,
      429,
      { type: 'error', error: { type: 'rate_limit_error', message: "This request would exceed your account's rate limit. Please try again later." } },
      {
        'retry-after': String(server.resetAfterSec),
        'anthropic-ratelimit-requests-reset': reset.toISOString(),
        'anthropic-ratelimit-unified-status': 'rejected',
        'anthropic-ratelimit-unified-reset': String(Math.ceil(reset.getTime() / 1000)),
      },
    );
  } else if (mode === 'overloaded') {
    sendJson(res, 529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
  } else {
    return false;
  }
  return true;
}
