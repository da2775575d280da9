import { describe, expect, it } from 'vitest';
import { egressRules } from '../../../src/sandbox/netns/network-namespace.js';

describe("an agent namespace's packet filter", () => {
  it("without an allow-list, rejects each of this host's networks and lets loopback and the rest out", () => {
    const rules = egressRules(undefined, ['192.168.1.5/32', '172.17.0.0/16']).split('\n');
    expect(rules).toEqual([
      '*filter',
      ':INPUT ACCEPT [0:0]',
      ':FORWARD DROP [0:0]',
      ':OUTPUT ACCEPT [0:0]',
      '-A OUTPUT -o lo -j ACCEPT',
      '-A OUTPUT -d 192.168.1.5/32 -j REJECT',
      '-A OUTPUT -d 172.17.0.0/16 -j REJECT',
      'COMMIT',
      '',
    ]);
  });

  it('with an allow-list, lets out only loopback and the proxy port on the gateway, and rejects everything else', () => {
    const rules = egressRules(40123, ['192.168.1.5/32']);
    expect(rules).toContain('-A OUTPUT -d 10.0.2.2/32 -p tcp --dport 40123 -j ACCEPT\n-A OUTPUT -j REJECT\nCOMMIT');
    expect(rules).not.toContain('192.168.1.5');
  });
});
