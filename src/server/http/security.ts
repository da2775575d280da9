import { createHash, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import { GenesisError } from '../../errors/genesis-error.js';

/** The shortest GENESIS_TOKEN accepted when the server is exposed: guessing must not be an option. */
export const MIN_TOKEN_LENGTH = 16;

/** How the server protects itself, decided once at start. */
export interface ServeSecurity {
  host: string;
  /** True when the server listens beyond this machine. */
  exposed: boolean;
  /** Required as `Authorization: Bearer <token>` on every request that changes anything; null: none. */
  token: string | null;
  /** Host names a browser may use to reach a loopback server; null when exposed (any name). */
  allowedHostnames: ReadonlySet<string> | null;
}

/** 127.0.0.0/8, ::1 and `localhost`: addresses no other machine can reach. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (bare === 'localhost' || bare.endsWith('.localhost')) return true;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  if (isIP(bare) === 6) return bare === '::1' || bare.startsWith('::ffff:127.');
  return false;
}

/**
 * Decides the server's protection. On loopback a token is optional (when GENESIS_TOKEN is set it
 * is still enforced). On any other host the token is required, so the server refuses to start
 * without one rather than let anyone who reaches the port retry tasks.
 */
export function resolveServeSecurity(host: string, token: string | undefined): ServeSecurity {
  const exposed = !isLoopbackHost(host);
  const given = token?.trim() ? token.trim() : null;
  if (exposed && given === null) {
    throw new GenesisError(
      'serve-token-required',
      `refusing to serve on ${host} without GENESIS_TOKEN: anyone who reaches this address could change the world`,
      {
        hint: 'set a long random token, e.g. `export GENESIS_TOKEN=$(openssl rand -hex 32)`, and send it as `Authorization: Bearer $GENESIS_TOKEN`; or leave out --host to serve on 127.0.0.1 only',
      },
    );
  }
  if (exposed && given !== null && given.length < MIN_TOKEN_LENGTH) {
    throw new GenesisError('serve-token-weak', `GENESIS_TOKEN has ${given.length} characters; an exposed server needs at least ${MIN_TOKEN_LENGTH}`, {
      hint: 'use a long random token, e.g. `export GENESIS_TOKEN=$(openssl rand -hex 32)`',
    });
  }
  // A browser reaching a loopback server under another name is a DNS-rebinding page: refuse it.
  const allowedHostnames = exposed ? null : new Set(['localhost', '127.0.0.1', '[::1]', '::1', host.toLowerCase()]);
  return { host, exposed, token: given, allowedHostnames };
}

/** Compares `Authorization: Bearer <token>` with the token in time that does not depend on where they differ. */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const match = /^Bearer\s+(.+)$/i.exec(header?.trim() ?? '');
  if (!match) return false;
  // Hashing first gives equal lengths, which timingSafeEqual needs.
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(match[1]!.trim()), digest(token));
}
