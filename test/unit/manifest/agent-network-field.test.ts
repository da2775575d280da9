import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { agentEndpoints, endpointEntry, endpointOfUrl, isLoopbackHost } from '../../../src/sandbox/egress/endpoints.js';
import { describeAgentReach } from '../../../src/agents/network-reach.js';
import { parseManifest } from '../../../src/manifest/parse.js';

function parse(agent: Record<string, unknown>) {
  return parseManifest(stringify({ name: 'w', goal: { outcome: 'x' }, verify: { test: 'npm test' }, agent }));
}

describe('agent.network in world.yaml', () => {
  it('refuses the bare host network, whatever the sandbox, and says how to acknowledge it', () => {
    for (const sandbox of ['auto', 'docker', 'bwrap']) {
      const { errors } = parse({ kind: 'command', preset: 'claude-code', sandbox, network: 'host' });
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatch(/^agent\.network: host would give the agent every service of this host.*\{ mode: host, acknowledge: "<why>" \}/);
    }
  });

  it('accepts the host network acknowledged in words, and refuses an acknowledgement that says nothing', () => {
    const acknowledged = parse({ kind: 'command', preset: 'codex', network: { mode: 'host', acknowledge: 'a trusted agent on a throwaway VM' } });
    expect(acknowledged.errors).toEqual([]);
    expect(acknowledged.manifest!.agent.network).toEqual({ mode: 'host', acknowledge: 'a trusted agent on a throwaway VM' });
    expect(parse({ kind: 'command', preset: 'codex', network: { mode: 'host', acknowledge: 'ok' } }).errors.join('\n')).toMatch(/acknowledge/);
    expect(parse({ kind: 'command', preset: 'codex', network: { mode: 'host' } }).errors).not.toEqual([]);
  });

  it('takes allow-list entries with a port, every port, or an IPv6 address, and refuses a URL', () => {
    const { errors } = parse({
      kind: 'command',
      preset: 'codex',
      network: { allow: ['127.0.0.1:8080', 'gateway.internal:*', '[::1]:11434', 'fe80::1', '*.openai.com'] },
    });
    expect(errors).toEqual([]);
    expect(parse({ kind: 'command', preset: 'codex', network: { allow: ['http://127.0.0.1:8080'] } }).errors).toHaveLength(1);
  });
});

describe('the endpoints an agent sandbox opens', () => {
  it("reads a baseUrl's host and port, with the scheme's port when it names none", () => {
    expect(endpointOfUrl('http://127.0.0.1:8080')).toMatchObject({ host: '127.0.0.1', port: 8080 });
    expect(endpointOfUrl('https://gateway.example.com/v1')).toMatchObject({ host: 'gateway.example.com', port: 443 });
    expect(endpointOfUrl('http://[::1]/v1')).toMatchObject({ host: '::1', port: 80 });
    expect(endpointOfUrl('ftp://x')).toBeNull();
  });

  it('opens the baseUrl of an agent that calls its model from its sandbox: a command agent and the openai program, not a script', () => {
    expect(agentEndpoints({ kind: 'command', baseUrl: 'http://localhost:11434/v1' })).toMatchObject([{ host: 'localhost', port: 11434 }]);
    expect(agentEndpoints({ kind: 'openai', baseUrl: 'http://localhost:11434/v1' })).toMatchObject([{ host: 'localhost', port: 11434 }]);
    expect(agentEndpoints({ kind: 'script', baseUrl: 'http://localhost:11434/v1' })).toEqual([]);
    expect(agentEndpoints({ kind: 'command' })).toEqual([]);
  });

  it("knows this host's loopback, and writes an endpoint as the allow-list entry of that one port", () => {
    expect(['127.0.0.1', '127.1.2.3', '::1', 'localhost', 'LOCALHOST.', 'a.localhost'].every(isLoopbackHost)).toBe(true);
    expect(['128.0.0.1', '10.0.2.2', 'localhost.example.com', '::2'].some(isLoopbackHost)).toBe(false);
    expect(endpointEntry({ host: '::1', port: 8080 })).toBe('[::1]:8080');
    expect(endpointEntry({ host: 'a.b', port: 443 })).toBe('a.b:443');
  });
});

describe('what genesis run says at start about the agents network', () => {
  const agentOf = (agent: Record<string, unknown>) => {
    const { manifest, errors } = parse(agent);
    expect(errors).toEqual([]);
    return manifest!.agent;
  };

  it('names the endpoint of each baseUrl, the rotation too, and that no other port of this host is open', () => {
    const reach = describeAgentReach(
      agentOf({
        kind: 'command',
        preset: 'claude-code',
        baseUrl: 'http://127.0.0.1:8080',
        rotation: [{ preset: 'opencode', baseUrl: 'http://127.0.0.1:9090/v1', model: 'm' }],
      }),
      true,
    );
    expect(reach!.line).toBe(
      "agent network: own namespace; the agent may reach its model at 127.0.0.1:8080 (this host's loopback, that port only), 127.0.0.1:9090 (this host's loopback, that port only) (agent.baseUrl); hosts outside this machine; no other address or port of this host",
    );
    expect(reach!.warning).toBeUndefined();
  });

  it('names the allow-list, and warns with the acknowledgement of the host network', () => {
    expect(describeAgentReach(agentOf({ kind: 'command', preset: 'codex', network: { allow: ['api.openai.com'] } }), true)!.line).toMatch(
      /through a proxy api\.openai\.com .*; nothing else$/,
    );
    const host = describeAgentReach(agentOf({ kind: 'command', preset: 'codex', network: { mode: 'host', acknowledge: 'a throwaway VM of mine' } }), true);
    expect(host!.warning).toMatch(/acknowledged as "a throwaway VM of mine": the agent reaches Redis, the dashboard/);
  });

  it('says nothing for agents that run no process, or run unconfined (they have their own warning)', () => {
    expect(describeAgentReach(agentOf({ kind: 'sim', sim: {} }), true)).toBeNull();
    expect(describeAgentReach(agentOf({ kind: 'command', preset: 'codex', sandbox: 'none' }), true)).toBeNull();
  });
});
