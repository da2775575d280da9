import { describe, expect, it } from 'vitest';
import { allowedTarget, parseAllowEntry } from '../../../src/sandbox/egress/allow-list.js';
import { targetOf } from '../../../src/sandbox/egress/egress-proxy.js';

const hostAllowed = (host: string, allow: readonly string[]) => allowedTarget(host, 443, allow);

describe('hostAllowed', () => {
  const allow = ['api.anthropic.com', '*.openai.com', '10.213.*'];

  it('admits listed names exactly, whatever their case or a trailing dot', () => {
    expect(hostAllowed('api.anthropic.com', allow)).toBe(true);
    expect(hostAllowed('API.Anthropic.COM.', allow)).toBe(true);
    expect(hostAllowed('anthropic.com', allow)).toBe(false);
    expect(hostAllowed('api.anthropic.com.evil.net', allow)).toBe(false);
    expect(hostAllowed('evilapi.anthropic.com', allow)).toBe(false);
  });

  it('lets * stand for any run of characters, so *.openai.com admits subdomains and not the bare name', () => {
    expect(hostAllowed('api.openai.com', allow)).toBe(true);
    expect(hostAllowed('a.b.openai.com', allow)).toBe(true);
    expect(hostAllowed('openai.com', allow)).toBe(false);
    expect(hostAllowed('openai.com.evil.net', allow)).toBe(false);
    expect(hostAllowed('10.213.4.2', allow)).toBe(true);
    expect(hostAllowed('10.2134.4.2', allow)).toBe(false);
  });

  it('treats the dots of a pattern as dots, not as any character', () => {
    expect(hostAllowed('apiXanthropicXcom', allow)).toBe(false);
  });
});

describe('allowedTarget', () => {
  it('admits a bare host on the web ports only, and a host:port entry on that port only', () => {
    expect(allowedTarget('api.openai.com', 443, ['api.openai.com'])).toBe(true);
    expect(allowedTarget('api.openai.com', 80, ['api.openai.com'])).toBe(true);
    expect(allowedTarget('api.openai.com', 8443, ['api.openai.com'])).toBe(false);
    expect(allowedTarget('127.0.0.1', 8080, ['127.0.0.1:8080'])).toBe(true);
    expect(allowedTarget('127.0.0.1', 6379, ['127.0.0.1:8080'])).toBe(false);
    expect(allowedTarget('127.0.0.1', 443, ['127.0.0.1:8080'])).toBe(false);
    expect(allowedTarget('127.0.0.2', 8080, ['127.0.0.1:8080'])).toBe(false);
  });

  it('admits every port only when the entry says host:*', () => {
    expect(allowedTarget('10.1.2.3', 6379, ['10.1.2.3:*'])).toBe(true);
    expect(allowedTarget('10.1.2.3', 6379, ['10.1.2.3'])).toBe(false);
  });

  it('reads IPv6 entries bare (web ports) or in brackets with a port', () => {
    expect(parseAllowEntry('::1')).toEqual({ host: '::1', ports: [80, 443] });
    expect(parseAllowEntry('[::1]:8080')).toEqual({ host: '::1', ports: [8080] });
    expect(allowedTarget('::1', 8080, ['[::1]:8080'])).toBe(true);
    expect(allowedTarget('::1', 8081, ['[::1]:8080'])).toBe(false);
  });

  it('refuses an entry whose port is not a port', () => {
    expect(parseAllowEntry('host:0')).toBeNull();
    expect(parseAllowEntry('host:70000')).toBeNull();
    expect(allowedTarget('host', 70000, ['host:70000'])).toBe(false);
  });
});

describe('targetOf', () => {
  it("reads a CONNECT target's host and port, with the default port when none is given", () => {
    expect(targetOf('api.openai.com:443', 443)).toEqual({ host: 'api.openai.com', port: 443 });
    expect(targetOf('example.com', 80)).toEqual({ host: 'example.com', port: 80 });
    expect(targetOf('[::1]:8080', 443)).toEqual({ host: '::1', port: 8080 });
  });

  it('refuses what is not a host and port', () => {
    expect(targetOf('a b:80', 443)).toBeNull();
    expect(targetOf('host:99999', 443)).toBeNull();
    expect(targetOf('http://x/', 443)).toBeNull();
  });
});

describe('hostNetworks', () => {
  it("names this host's own IPv4 addresses and its container bridges' subnets, never loopback or IPv6", async () => {
    const { hostNetworks } = await import('../../../src/sandbox/netns/network-namespace.js');
    const nic = (address: string, cidr: string, internal = false, family: 'IPv4' | 'IPv6' = 'IPv4') => ({
      address,
      cidr,
      internal,
      family,
      netmask: '',
      mac: '',
      scopeid: 0,
    });
    expect(
      hostNetworks({
        lo: [nic('127.0.0.1', '127.0.0.1/8', true)],
        eth0: [nic('192.0.2.2', '192.0.2.2/24'), nic('fe80::1', 'fe80::1/64', false, 'IPv6')],
        docker0: [nic('172.17.0.1', '172.17.0.1/16')],
        'br-1a2b': [nic('172.18.0.1', '172.18.0.1/16')],
      } as never),
    ).toEqual(['192.0.2.2/32', '172.17.0.1/32', '172.17.0.1/16', '172.18.0.1/32', '172.18.0.1/16']);
  });
});
