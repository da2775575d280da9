import {
  modeOfCall,
  nextUsage,
  sendJson,
  startScriptedServer,
  startSse,
  writeEvent,
  type Exchange,
  type ServerMode,
  type ScriptedServer,
} from './scripted-server.js';
import { workspacePath } from './workspace-path.js';

/**
 * OpenAI's Chat Completions API as opencode (through `@ai-sdk/openai-compatible`), Qwen Code and
 * Copilot CLI (bring your own model) call it (`POST /v1/chat/completions`, streamed): a working
 * turn is answered with a call of the CLI's own file-writing tool (see WRITE_TOOLS), or of its shell tool
 * when the server has a command, the turn
 * carrying its result (a `tool` message) with a final text; a call without tools (the session's
 * title) with a short text. Usage comes in the last chunk, only when `stream_options.include_usage` asks for it.
 */
export function startChatCompletionsServer(options: { mode?: ServerMode } = {}): Promise<ScriptedServer> {
  return startScriptedServer(handleChat, options);
}

function handleChat(x: Exchange): unknown {
  const { res, url, json, server } = x;
  if (!url.pathname.endsWith('/chat/completions')) {
    if (url.pathname.endsWith('/models')) return sendJson(res, 200, { object: 'list', data: [{ id: 'scripted-model', object: 'model' }] });
    return sendJson(res, 404, { error: { message: `no route ${url.pathname}`, type: 'invalid_request_error' } });
  }
  if (refuse(x)) return;
  const tools = Array.isArray(json.tools) ? (json.tools as Array<{ function?: { name?: string } }>) : [];
  const messages = Array.isArray(json.messages) ? (json.messages as Array<{ role?: string }>) : [];
  const answered = messages.at(-1)?.role === 'tool';
  const usage = nextUsage(server, tools.length > 0);
  const base = {
    id: `chatcmpl-${server.sent.length}`,
    object: 'chat.completion.chunk',
    created: Math.floor(Date.now() / 1000),
    model: json.model ?? 'scripted',
  };
  const call = tools.length > 0 && !answered;
  const declared = (name: string) => tools.some((t) => t.function?.name === name);
  const { name: toolName, args: toolArgs } = call ? toolCallOf(x, declared) : { name: '', args: '' };
  const usageOut = { prompt_tokens: usage.input, completion_tokens: usage.output, total_tokens: usage.input + usage.output };
  if (json.stream !== true) {
    const message = call
      ? {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: `call_${server.sent.length}`, type: 'function', function: { name: toolName, arguments: toolArgs } }],
        }
      : { role: 'assistant', content: tools.length > 0 ? server.say : 'Scripted title' };
    return sendJson(res, 200, {
      ...base,
      object: 'chat.completion',
      choices: [{ index: 0, message, finish_reason: call ? 'tool_calls' : 'stop' }],
      usage: usageOut,
    });
  }
  startSse(res);
  if (call) {
    const args = toolArgs;
    const half = Math.floor(args.length / 2);
    writeEvent(res, {
      ...base,
      choices: [
        {
          index: 0,
          delta: {
            role: 'assistant',
            tool_calls: [{ index: 0, id: `call_${server.sent.length}`, type: 'function', function: { name: toolName, arguments: args.slice(0, half) } }],
          },
          finish_reason: null,
        },
      ],
    });
    writeEvent(res, {
      ...base,
      choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: args.slice(half) } }] }, finish_reason: null }],
    });
  } else {
    writeEvent(res, {
      ...base,
      choices: [{ index: 0, delta: { role: 'assistant', content: tools.length > 0 ? server.say : 'Scripted title' }, finish_reason: null }],
    });
  }
  writeEvent(res, { ...base, choices: [{ index: 0, delta: {}, finish_reason: call ? 'tool_calls' : 'stop' }] });
  // As OpenAI does: a stream names its usage only when stream_options.include_usage asks for it.
  if ((json.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true) writeEvent(res, { ...base, choices: [], usage: usageOut });
  writeEvent(res, '[DONE]');
  res.end();
}

/** Each CLI's file-writing tool and the names of its path and content arguments: opencode's, Qwen Code's, Copilot's. */
const WRITE_TOOLS = [
  { name: 'write', path: 'filePath', content: 'content' },
  { name: 'write_file', path: 'file_path', content: 'content' },
  { name: 'create', path: 'path', content: 'file_text' },
] as const;

/** Each CLI's shell tool: opencode's and Copilot's `bash` (which want a description), Qwen Code's `run_shell_command`. */
const SHELL_TOOLS = ['bash', 'run_shell_command'] as const;

/** The tool call of a working turn: the server's command through the CLI's shell tool when it has one, else its file written. */
function toolCallOf(x: Exchange, declared: (name: string) => boolean): { name: string; args: string } {
  const { command, file } = x.server;
  const shell = SHELL_TOOLS.find(declared);
  if (command !== null) {
    if (!shell) throw new Error(`the CLI declared none of the shell tools ${SHELL_TOOLS.join(', ')}`);
    return { name: shell, args: JSON.stringify({ command, description: 'Run the task script' }) };
  }
  const tool = WRITE_TOOLS.find((w) => declared(w.name)) ?? WRITE_TOOLS[0]!;
  return { name: tool.name, args: JSON.stringify({ [tool.path]: workspacePath(x.body, file.path), [tool.content]: file.content }) };
}

/** The refusals of the failure modes, as an OpenAI-compatible gateway words them; true when it refused. */
function refuse({ res, server }: Exchange): boolean {
  const mode = modeOfCall(server);
  if (mode === 'auth') {
    sendJson(res, 401, { error: { message: 'Incorrect API key provided: sk-test.', type: 'invalid_request_error', code: 'invalid_api_key' } });
  } else if (mode === 'usage-limit') {
    sendJson(
      res,
      429,
      { error: { message: `Rate limit reached. Please try again in ${server.resetAfterSec}s.`, type: 'requests', code: 'rate_limit_exceeded' } },
      { 'retry-after': String(server.resetAfterSec), 'x-ratelimit-reset-requests': `${server.resetAfterSec}s` },
    );
  } else if (mode === 'overloaded') {
    sendJson(res, 503, { error: { message: 'The server is overloaded. Please try again later.', type: 'server_error', code: 'server_is_overloaded' } });
  } else {
    return false;
  }
  return true;
}
