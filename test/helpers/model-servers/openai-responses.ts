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

/**
 * OpenAI's Responses API as Codex calls it (`POST /v1/responses`, streamed; a WebSocket attempt is
 * refused by the scripted server, so Codex falls back to HTTP): a working turn is answered with an
 * `apply_patch` call that adds the file (a custom tool call or a function call, whichever the
 * request declares; else, or when the server has a command, a `shell` call), the turn carrying its output with a final message.
 * Usage is reported in `response.completed`, as the real API does.
 */
export function startResponsesServer(options: { mode?: ServerMode } = {}): Promise<ScriptedServer> {
  return startScriptedServer(handleResponses, options);
}

interface Tool {
  type?: string;
  name?: string;
}

function handleResponses(x: Exchange): unknown {
  const { res, url, json, server } = x;
  if (!url.pathname.endsWith('/responses')) {
    if (url.pathname.endsWith('/models')) return sendJson(res, 200, { object: 'list', data: [], models: [] });
    return sendJson(res, 404, { error: { message: `no route ${url.pathname}`, type: 'invalid_request_error' } });
  }
  if (refuse(x)) return;
  const tools = (Array.isArray(json.tools) ? json.tools : []) as Tool[];
  const input = Array.isArray(json.input) ? json.input : [];
  const answered = input.some((item) => /_call_output"/.test(JSON.stringify(item)) || String((item as { type?: string }).type ?? '').endsWith('_call_output'));
  const usage = nextUsage(server, tools.length > 0);
  const id = `resp_${server.sent.length}`;
  const item = tools.length > 0 && !answered ? toolCall(tools, server) : message(tools.length > 0 ? server.say : 'Scripted title');
  const response = {
    id,
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    model: json.model ?? 'scripted',
    status: 'in_progress',
    output: [] as unknown[],
  };
  startSse(res);
  writeEvent(res, { type: 'response.created', sequence_number: 0, response }, 'response.created');
  writeEvent(
    res,
    { type: 'response.output_item.added', sequence_number: 1, output_index: 0, item: { ...item, status: 'in_progress' } },
    'response.output_item.added',
  );
  if (item.type === 'message') {
    const text = (item.content as Array<{ text: string }>)[0]!.text;
    writeEvent(
      res,
      { type: 'response.output_text.delta', sequence_number: 2, item_id: item.id, output_index: 0, content_index: 0, delta: text },
      'response.output_text.delta',
    );
  }
  writeEvent(res, { type: 'response.output_item.done', sequence_number: 3, output_index: 0, item }, 'response.output_item.done');
  const completed = {
    ...response,
    status: 'completed',
    output: [item],
    usage: {
      input_tokens: usage.input,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: usage.output,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: usage.input + usage.output,
    },
  };
  writeEvent(res, { type: 'response.completed', sequence_number: 4, response: completed }, 'response.completed');
  res.end();
}

function patchOf(server: ScriptedServer): string {
  const lines = server.file.content
    .replace(/\n$/, '')
    .split('\n')
    .map((l) => `+${l}`);
  return ['*** Begin Patch', `*** Add File: ${server.file.path}`, ...lines, '*** End Patch', ''].join('\n');
}

function toolCall(tools: Tool[], server: ScriptedServer): Record<string, unknown> {
  const n = server.sent.length;
  const patch = server.command === null ? tools.find((t) => t.name === 'apply_patch') : undefined;
  if (patch?.type === 'custom')
    return { type: 'custom_tool_call', id: `ctc_${n}`, call_id: `call_${n}`, name: 'apply_patch', input: patchOf(server), status: 'completed' };
  if (patch)
    return {
      type: 'function_call',
      id: `fc_${n}`,
      call_id: `call_${n}`,
      name: 'apply_patch',
      arguments: JSON.stringify({ input: patchOf(server) }),
      status: 'completed',
    };
  const shell = tools.find((t) => t.name === 'shell' || t.name === 'exec_command' || t.name === 'local_shell')?.name ?? 'shell';
  const script = server.command ?? `printf '%s' ${shellQuote(server.file.content)} > ${shellQuote(server.file.path)}`;
  const args = shell === 'exec_command' ? { cmd: script } : { command: ['bash', '-lc', script] };
  return { type: 'function_call', id: `fc_${n}`, call_id: `call_${n}`, name: shell, arguments: JSON.stringify(args), status: 'completed' };
}

function shellQuote(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`;
}

function message(text: string): Record<string, unknown> {
  return { type: 'message', id: `msg_${Date.now()}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] };
}

/** The refusals of the failure modes, as api.openai.com words them; true when it refused. */
function refuse({ res, server }: Exchange): boolean {
  const mode = modeOfCall(server);
  if (mode === 'auth') {
    sendJson(res, 401, { error: { message: 'Incorrect API key provided: sk-test.', type: 'invalid_request_error', code: 'invalid_api_key' } });
  } else if (mode === 'usage-limit') {
    sendJson(
      res,
      429,
      { error: { type: 'usage_limit_reached', message: 'The usage limit has been reached', resets_in_seconds: server.resetAfterSec } },
      { 'retry-after': String(server.resetAfterSec), 'x-ratelimit-reset-requests': `${server.resetAfterSec}s` },
    );
  } else if (mode === 'overloaded') {
    sendJson(res, 503, { error: { message: 'The server is overloaded. Please try again later.', type: 'server_error', code: 'server_is_overloaded' } });
  } else {
    return false;
  }
  return true;
}
