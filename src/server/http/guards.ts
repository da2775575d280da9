import type { MiddlewareHandler } from 'hono';
import type { ErrorCode } from '../../errors/genesis-error.js';
import { bearerMatches, type ServeSecurity } from './security.js';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

function refuse(status: 401 | 403 | 415 | 421, code: ErrorCode, message: string, hint: string): Response {
  const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8' };
  if (status === 401) headers['www-authenticate'] = 'Bearer realm="genesis"';
  return new Response(JSON.stringify({ error: { code, message, hint } }), { status, headers });
}

/**
 * Refuses requests to a loopback server that name another host: a web page on some domain that
 * rebinds its name to 127.0.0.1 could otherwise read the dashboard through the victim's browser.
 */
export function hostGuard(security: ServeSecurity): MiddlewareHandler {
  return async (c, next) => {
    if (security.allowedHostnames) {
      const hostname = new URL(c.req.url).hostname.toLowerCase();
      if (!security.allowedHostnames.has(hostname)) {
        return refuse(421, 'wrong-host', `this server answers to 127.0.0.1 and localhost, not ${hostname}`, 'open the address genesis serve printed');
      }
    }
    await next();
  };
}

/**
 * Guards every request that changes anything (the API's and the queue board's):
 * - with a token, `Authorization: Bearer <token>` must match (401 otherwise);
 * - a browser's `Origin`, when sent, must be this server's own (403 otherwise): another site's
 *   page cannot post to a loopback server through the user's browser.
 * Reads stay open: the token protects changes (see README on exposing reads).
 */
export function writeGuard(security: ServeSecurity): MiddlewareHandler {
  return async (c, next) => {
    if (SAFE_METHODS.has(c.req.method)) return next();
    if (security.token !== null && !bearerMatches(c.req.header('authorization'), security.token)) {
      return refuse(
        401,
        'token-required',
        "this request changes the world and needs the server's token",
        'send Authorization: Bearer $GENESIS_TOKEN (the dashboard asks for it once)',
      );
    }
    const origin = c.req.header('origin');
    if (origin && hostOf(origin) !== new URL(c.req.url).host) {
      return refuse(403, 'cross-origin', `a page from ${origin} may not change this world`, 'use the dashboard served by genesis serve itself');
    }
    await next();
  };
}

/**
 * Requires a JSON body on the API's changes: a cross-site form cannot send one without a CORS
 * preflight, which this server never grants, so this holds even where a browser sends no Origin.
 */
export function jsonBodyGuard(): MiddlewareHandler {
  return async (c, next) => {
    if (SAFE_METHODS.has(c.req.method)) return next();
    if (!/^application\/json\b/i.test(c.req.header('content-type') ?? '')) {
      return refuse(415, 'json-required', 'send the request body as JSON', 'set Content-Type: application/json (an empty body is {})');
    }
    await next();
  };
}

// `null` (sandboxed frames, file: pages) and malformed origins have no host and never match.
function hostOf(origin: string): string | null {
  try {
    return new URL(origin).host || null;
  } catch {
    return null;
  }
}
