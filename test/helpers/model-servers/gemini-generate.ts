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
 * Google's Gemini API as Gemini CLI calls it (`POST /v1beta/models/<m>:streamGenerateContent?alt=sse`
 * for turns, `:generateContent` for its side calls, `:countTokens`): a working turn is answered with a
 * `write_file` function call (`run_shell_command` when the server has a command), the turn carrying its `functionResponse` with a final text; a side
 * call (which asks for JSON) with `{"next_speaker":"user"}`. Usage is `usageMetadata`, as the real API sends it.
 */
export function startGeminiServer(options: { mode?: ServerMode } = {}): Promise<ScriptedServer> {
  return startScriptedServer(handleGemini, options);
}

function handleGemini(x: Exchange): unknown {
  const { res, url, json, server } = x;
  const method = url.pathname.slice(url.pathname.lastIndexOf(':') + 1);
  if (method === 'countTokens') return sendJson(res, 200, { totalTokens: 1000 });
  if (method !== 'generateContent' && method !== 'streamGenerateContent') {
    return sendJson(res, 404, { error: { code: 404, message: `no route ${url.pathname}`, status: 'NOT_FOUND' } });
  }
  if (refuse(x)) return;
  const tools = Array.isArray(json.tools) && json.tools.length > 0;
  const contents = Array.isArray(json.contents) ? json.contents : [];
  const answered = JSON.stringify(contents.at(-1) ?? {}).includes('"functionResponse"');
  const usage = nextUsage(server, tools);
  const part =
    tools && !answered
      ? server.command !== null
        ? { functionCall: { name: 'run_shell_command', args: { command: server.command, description: 'Run the task script' } } }
        : { functionCall: { name: 'write_file', args: { file_path: workspacePath(x.body, server.file.path), content: server.file.content } } }
      : { text: tools ? server.say : JSON.stringify({ reasoning: 'The task is done.', next_speaker: 'user' }) };
  const body = {
    candidates: [{ content: { role: 'model', parts: [part] }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: usage.input, candidatesTokenCount: usage.output, totalTokenCount: usage.input + usage.output },
    modelVersion: url.pathname.split('/').at(-1)?.split(':')[0] ?? 'scripted',
    responseId: `resp-${server.sent.length}`,
  };
  if (method === 'generateContent') return sendJson(res, 200, body);
  startSse(res);
  writeEvent(res, body);
  res.end();
}

/** The refusals of the failure modes, as generativelanguage.googleapis.com words them; true when it refused. */
function refuse({ res, server }: Exchange): boolean {
  const mode = modeOfCall(server);
  if (mode === 'auth') {
    sendJson(res, 400, {
      error: {
        code: 400,
        message: 'API key not valid. Please pass a valid API key.',
        status: 'INVALID_ARGUMENT',
        details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID' }],
      },
    });
  } else if (mode === 'usage-limit') {
    sendJson(res, 429, {
      error: {
        code: 429,
        message: `You exceeded your current quota. Please retry in ${server.resetAfterSec}s.`,
        status: 'RESOURCE_EXHAUSTED',
        details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${server.resetAfterSec}s` }],
      },
    });
  } else if (mode === 'overloaded') {
    sendJson(res, 503, { error: { code: 503, message: 'The model is overloaded. Please try again later.', status: 'UNAVAILABLE' } });
  } else {
    return false;
  }
  return true;
}
