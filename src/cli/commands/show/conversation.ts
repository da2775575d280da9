import type { RecordedCall } from '../../../channel/conversation.js';

/** The model calls of a transcript the gateway recorded, or null when the transcript is another agent's (or none). */
function callsOf(transcript: string | undefined): RecordedCall[] | null {
  if (!transcript) return null;
  try {
    const parsed = JSON.parse(transcript) as { calls?: unknown };
    return Array.isArray(parsed.calls) ? (parsed.calls as RecordedCall[]) : null;
  } catch {
    return null;
  }
}

/**
 * The episode's model calls as the gateway saw them: one line each (what, status, tokens, cost,
 * time to first byte), and with `bodies` what was sent and answered, as recorded (bounded).
 */
export function formatConversation(transcript: string | undefined, bodies: boolean): string | null {
  const calls = callsOf(transcript);
  if (!calls) return null;
  if (calls.length === 0) return 'no model call';
  return calls
    .map((call, i) => {
      const tokens = call.tokens ? `${call.tokens.input} in (${call.tokens.cached} cached), ${call.tokens.output} out` : 'no tokens named';
      const cost = call.costUsd === null ? '' : `, $${call.costUsd.toFixed(4)}`;
      const first = call.firstByteMs === null ? '' : `, first byte ${call.firstByteMs} ms`;
      const line = `${i + 1}. ${call.at} ${call.method} ${call.path} ${call.model ?? ''} → ${call.status ?? '-'}${call.problem ? ` (${call.problem})` : ''}: ${tokens}${cost}; ${call.durationMs} ms${first}`;
      if (!bodies) return line;
      const cut = (what: 'request' | 'response') => (call.truncated?.[what] ? `\n   [${call.truncated[what]} more characters not kept]` : '');
      return `${line}\n   sent: ${call.request ?? '(none kept)'}${cut('request')}\n   answered: ${call.response ?? '(none kept)'}${cut('response')}`;
    })
    .join('\n');
}
