import { describe, expect, it } from 'vitest';
import { GenesisError } from '../../../src/errors/genesis-error.js';
import { bearerMatches, isLoopbackHost, resolveServeSecurity } from '../../../src/server/http/security.js';

describe('serve security', () => {
  it('treats 127.0.0.0/8, ::1 and localhost as loopback, and nothing else', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]', 'LOCALHOST']) expect(isLoopbackHost(host), host).toBe(true);
    for (const host of ['0.0.0.0', '::', '192.168.1.5', 'example.com', '10.0.0.1']) expect(isLoopbackHost(host), host).toBe(false);
  });

  it('needs no token on loopback but enforces one when it is set', () => {
    expect(resolveServeSecurity('127.0.0.1', undefined)).toMatchObject({ exposed: false, token: null });
    expect(resolveServeSecurity('127.0.0.1', 'x')).toMatchObject({ exposed: false, token: 'x' });
  });

  it('refuses an exposed host without a token, or with a short one', () => {
    expect(() => resolveServeSecurity('0.0.0.0', undefined)).toThrow(GenesisError);
    expect(() => resolveServeSecurity('0.0.0.0', '   ')).toThrow(/refusing to serve on 0.0.0.0 without GENESIS_TOKEN/);
    expect(() => resolveServeSecurity('0.0.0.0', 'short')).toThrow(/at least 16/);
    expect(resolveServeSecurity('0.0.0.0', 'x'.repeat(16))).toMatchObject({ exposed: true, allowedHostnames: null });
  });

  it('matches only the exact bearer token', () => {
    expect(bearerMatches('Bearer secret-token', 'secret-token')).toBe(true);
    expect(bearerMatches('bearer secret-token', 'secret-token')).toBe(true);
    expect(bearerMatches('Bearer secret-tokeN', 'secret-token')).toBe(false);
    expect(bearerMatches('secret-token', 'secret-token')).toBe(false);
    expect(bearerMatches(undefined, 'secret-token')).toBe(false);
  });
});
