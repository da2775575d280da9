import { describe, expect, it } from 'vitest';
import { agentModelUrl, sandboxEndpoints, type ModelRoute } from '../../../src/agents/model-route.js';

function route(inside: ModelRoute['inside'], path = '/v1'): ModelRoute {
  return {
    gateway: {} as ModelRoute['gateway'],
    upstream: new URL('https://api.example.com/v1'),
    credentials: {},
    inside,
    path,
    stallMs: 1000,
    priceOf: () => null,
  };
}

describe('the URL an agent is given for its model', () => {
  it('brackets an IPv6 address of the listener or of the namespace, and no other host', () => {
    expect(agentModelUrl(route(null), 4100)).toBe('http://127.0.0.1:4100/v1');
    expect(agentModelUrl(route(null), 4100, '::1')).toBe('http://[::1]:4100/v1');
    expect(agentModelUrl(route({ host: 'fd00::2', port: 7811 }, ''), 4100)).toBe('http://[fd00::2]:7811');
    expect(agentModelUrl(route({ host: '10.0.0.1', port: 7811 }), 4100)).toBe('http://10.0.0.1:7811/v1');
  });

  it('is the one endpoint the sandbox admits, IPv6 included', () => {
    expect(sandboxEndpoints(route({ host: 'fd00::2', port: 7811 }), [])).toEqual([expect.objectContaining({ host: 'fd00::2', port: 7811 })]);
    expect(sandboxEndpoints(route(null), [{ host: 'x', port: 1 } as never])).toEqual([]);
  });
});
