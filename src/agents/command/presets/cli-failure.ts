import type { AgentFailureClass } from '../../failure-classes.js';
import { refusalKindOf } from '../../../channel/upstream-refusal.js';

/** What a CLI's output says went wrong, classified (see AgentFailureClass). */
export type CliFailure = AgentFailureClass;

/** HTTP statuses (read as the gateway reads them) and error names vendors answer with, classified; null for anything else. */
export function classifyApiError(status: number | null, text: string, now = Date.now()): CliFailure | null {
  const message = text.trim().slice(0, 300) || `HTTP ${status ?? '?'}`;
  const kind = refusalKindOf(status);
  if (kind === 'auth' || /authentication_error|authentication_failed|invalid[_ ]api[_ ]key|API_KEY_INVALID|Incorrect API key|API key not valid/i.test(text)) {
    return { kind: 'auth', message };
  }
  if (kind === 'usage-limit' || /rate_limit|usage_limit|usage limit|RESOURCE_EXHAUSTED|exceeded your current quota/i.test(text)) {
    return { kind: 'usage-limit', message, resetAt: resetTimeOf(text, now) };
  }
  if (kind === 'overloaded' || /overloaded|at capacity/i.test(text)) return { kind: 'overloaded', message };
  return null;
}

/**
 * The reset time a refusal names: "try again in 30s", "retry in 12.5s", `"retryDelay":"30s"`,
 * `"resets_in_seconds":30`, `|1767225600` (Claude's "usage limit reached|<epoch>"), or an ISO time.
 */
export function resetTimeOf(text: string, now = Date.now()): number | null {
  const inSeconds =
    /(?:try again|retry) in (\d+(?:\.\d+)?)\s*s|retryDelay\\?"?:\s*\\?"(\d+(?:\.\d+)?)s|resets_in_seconds\\?"?:\s*(\d+)|retry-after\\?"?:\s*\\?"?(\d+)/i.exec(
      text,
    );
  const seconds = inSeconds?.slice(1).find((v) => v !== undefined);
  if (seconds !== undefined) return now + Math.round(Number.parseFloat(seconds) * 1000);
  const epoch = /limit reached\|(\d{10})/i.exec(text);
  if (epoch) return Number(epoch[1]) * 1000;
  const iso = /resets? (?:at )?(\d{4}-\d\d-\d\dT[\d:.]+Z)/i.exec(text);
  return iso ? Date.parse(iso[1]!) : null;
}

/** The first HTTP error status a message names ("… 401 Unauthorized …"), or null. */
export function statusIn(text: string): number | null {
  const m = /\b([45]\d\d)\b/.exec(text);
  return m ? Number(m[1]) : null;
}
