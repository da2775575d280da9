import { describe, expect, it } from 'vitest';
import { describeNetworkFailure, GATE_OFFLINE_ENV, networkFailureKind } from '../../../src/deps/offline-env.js';

describe('describeNetworkFailure', () => {
  it.each([
    ['npm without a network', 'npm error code ENOTFOUND\nnpm error syscall getaddrinfo\nnpm error errno ENOTFOUND registry.npmjs.org'],
    ['npm kept offline', "npm error code ENOTCACHED\nnpm error request to https://registry.npmjs.org/semver failed: cache mode is 'only-if-cached'"],
    ['a DNS retry', 'Error: getaddrinfo EAI_AGAIN registry.npmjs.org'],
    ['curl', 'curl: (6) Could not resolve host: example.com'],
    ['pip with no index', 'ERROR: Could not find a version that satisfies the requirement pytest (from versions: none)'],
    ['pip retrying', 'WARNING: Retrying ... Failed to establish a new connection: [Errno -3] Temporary failure in name resolution'],
    ['cargo offline', 'error: failed to download `serde v1.0.0`\nattempting to make an HTTP request, but --offline was specified'],
  ])('recognises %s and points at verify.deps', (_what, output) => {
    const message = describeNetworkFailure(output);
    expect(message).toContain('gates have no network');
    expect(message).toContain('verify.deps');
  });

  it('stays silent on failures that have nothing to do with the network', () => {
    expect(describeNetworkFailure('AssertionError: expected 3 to equal 4\n# fail 1')).toBeNull();
    expect(describeNetworkFailure("error TS2307: Cannot find module './add.js'")).toBeNull();
  });
});

describe('GATE_OFFLINE_ENV', () => {
  it('tells npm, pip and cargo to stay offline', () => {
    expect(GATE_OFFLINE_ENV).toMatchObject({ npm_config_offline: 'true', PIP_NO_INDEX: '1', CARGO_NET_OFFLINE: 'true' });
  });
});

describe('networkFailureKind', () => {
  it('names the kind of failure for an install that could not reach its registry', () => {
    expect(networkFailureKind('npm error request to https://registry.npmjs.org/x failed, reason: getaddrinfo EAI_AGAIN registry.npmjs.org')).toBe(
      'a name lookup failed',
    );
    expect(networkFailureKind('npm error code E404')).toBeNull();
  });
});
