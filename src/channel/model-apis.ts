/**
 * The model APIs the gateway understands, told apart by the path of each request: a CLI may call
 * several (Claude Code counts tokens beside its messages; Gemini CLI calls generateContent and
 * streamGenerateContent), so the API is a property of the request, not of the agent.
 */
export type ModelApi = 'anthropic-messages' | 'openai-responses' | 'openai-chat' | 'gemini' | 'other';

export function apiOfPath(path: string): ModelApi {
  const bare = path.split('?')[0]!;
  if (/\/messages(\/count_tokens)?$/.test(bare)) return 'anthropic-messages';
  if (/\/responses(\/[^/]+)?$/.test(bare)) return 'openai-responses';
  if (/\/chat\/completions$/.test(bare) || /\/completions$/.test(bare)) return 'openai-chat';
  if (/:(stream)?[gG]enerateContent$|:countTokens$/.test(bare)) return 'gemini';
  return 'other';
}

/**
 * The vendor family of an API, for the shape of the errors the gateway answers with itself (a
 * held limit, a spent budget): each CLI then behaves as it would with its vendor.
 */
export type Vendor = 'anthropic' | 'openai' | 'gemini';

export function vendorOfApi(api: ModelApi): Vendor {
  if (api === 'anthropic-messages') return 'anthropic';
  if (api === 'gemini') return 'gemini';
  return 'openai';
}

/** What the gateway says instead of the model, as a status and a vendor-shaped JSON body. */
export interface GatewayRefusal {
  status: number;
  /** The vendor's error type: rate_limit_error, authentication_error, overloaded_error, api_error… */
  kind: 'rate-limit' | 'auth' | 'overloaded' | 'unavailable' | 'timeout' | 'budget' | 'too-large';
  message: string;
  /** Seconds until a retry can succeed, sent as retry-after. */
  retryAfterSec?: number;
}

const ANTHROPIC_TYPES: Record<GatewayRefusal['kind'], string> = {
  'rate-limit': 'rate_limit_error',
  auth: 'authentication_error',
  overloaded: 'overloaded_error',
  unavailable: 'api_error',
  timeout: 'timeout_error',
  budget: 'rate_limit_error',
  'too-large': 'request_too_large',
};

const GEMINI_STATUS: Record<GatewayRefusal['kind'], string> = {
  'rate-limit': 'RESOURCE_EXHAUSTED',
  auth: 'UNAUTHENTICATED',
  overloaded: 'UNAVAILABLE',
  unavailable: 'UNAVAILABLE',
  timeout: 'DEADLINE_EXCEEDED',
  budget: 'RESOURCE_EXHAUSTED',
  'too-large': 'INVALID_ARGUMENT',
};

/** The body a vendor answers an error with, for `refusal`. */
export function refusalBody(vendor: Vendor, refusal: GatewayRefusal): unknown {
  const message = `genesis gateway: ${refusal.message}`;
  if (vendor === 'anthropic') return { type: 'error', error: { type: ANTHROPIC_TYPES[refusal.kind], message } };
  if (vendor === 'gemini') {
    return {
      error: {
        code: refusal.status,
        message,
        status: GEMINI_STATUS[refusal.kind],
        ...(refusal.retryAfterSec === undefined
          ? {}
          : { details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${refusal.retryAfterSec}s` }] }),
      },
    };
  }
  const code =
    refusal.kind === 'rate-limit' || refusal.kind === 'budget' ? 'rate_limit_exceeded' : refusal.kind === 'auth' ? 'invalid_api_key' : 'server_error';
  return { error: { message, type: refusal.kind === 'auth' ? 'invalid_request_error' : code, code } };
}
