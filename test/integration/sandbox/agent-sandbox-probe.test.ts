import { describe, expect } from 'vitest';
import { createAgentSandbox } from '../../../src/sandbox/create-agent-sandbox.js';
import { itWith } from '../../helpers/services.js';

const options = { kind: 'bwrap', image: 'genesis/node:20', network: 'genesis-agents' } as const;

describe('when agent sandboxes are made one after another in a process', () => {
  itWith('bwrap')('probes bubblewrap once for the same options and again for others', async () => {
    const first = await createAgentSandbox(options);
    expect(await createAgentSandbox(options)).toBe(first);
    expect(await createAgentSandbox({ ...options, network: { allow: ['example.com'] } })).not.toBe(first);
  });

  itWith('bwrap')('keeps no failed probe: once bubblewrap can be found, the next one passes', async () => {
    const saved = process.env.PATH;
    const other = { ...options, image: 'genesis/probe-test' };
    process.env.PATH = '/nonexistent';
    try {
      await expect(createAgentSandbox(other)).rejects.toMatchObject({ code: 'agent-sandbox-unavailable' });
    } finally {
      process.env.PATH = saved;
    }
    await expect(createAgentSandbox(other)).resolves.toMatchObject({ kind: 'bwrap' });
  });
});
