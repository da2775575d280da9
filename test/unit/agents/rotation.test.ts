import { describe, expect, it } from 'vitest';
import type { Agent, AgentRunInput } from '../../../src/agents/agent.js';
import { agentForAttempt, RotatingAgent } from '../../../src/agents/rotation.js';
import { agentConfigForAttempt } from '../../../src/manifest/agent-config.js';
import { manifestSchema } from '../../../src/manifest/schema.js';

function agentOf(agent: Record<string, unknown>) {
  return manifestSchema.parse({ name: 'w', goal: { outcome: 'x' }, verify: { test: 't' }, agent }).agent;
}

const fake = (label: string): Agent => ({ label, run: async () => ({ exitCode: 0, timedOut: false, aborted: false, log: label, durationMs: 0 }) });

describe('agent.rotation', () => {
  const base = agentOf({
    kind: 'command',
    preset: 'claude-code',
    model: 'sonnet',
    args: ['--x'],
    env: ['A'],
    sandbox: 'bwrap',
    rotation: [{}, { preset: 'codex' }, { model: 'opus' }],
  });

  it('uses entry (n-1) mod length for attempt n', () => {
    expect([1, 2, 3, 4, 5, 6].map((n) => agentConfigForAttempt(base, n).preset)).toEqual([
      'claude-code',
      'codex',
      'claude-code',
      'claude-code',
      'codex',
      'claude-code',
    ]);
  });

  it('keeps the base agent for an empty entry', () => {
    expect(agentConfigForAttempt(base, 1)).toMatchObject({ kind: 'command', preset: 'claude-code', model: 'sonnet', args: ['--x'] });
  });

  it("replaces the base's whole choice of agent when an entry names another agent", () => {
    const codex = agentConfigForAttempt(base, 2);
    expect(codex).toMatchObject({ kind: 'command', preset: 'codex', sandbox: 'bwrap' });
    expect(codex.model).toBeUndefined();
    expect(codex.args).toBeUndefined();
  });

  it('changes only the model when an entry names only a model', () => {
    expect(agentConfigForAttempt(base, 3)).toMatchObject({ preset: 'claude-code', model: 'opus', args: ['--x'] });
  });

  it('switches kinds, and adds the entry variables to the base ones', () => {
    const mixed = agentOf({
      kind: 'command',
      preset: 'aider',
      env: ['A'],
      rotation: [{ kind: 'openai', baseUrl: 'http://localhost:11434/v1', model: 'qwen', env: ['B'] }],
    });
    expect(agentConfigForAttempt(mixed, 1)).toMatchObject({ kind: 'openai', baseUrl: 'http://localhost:11434/v1', model: 'qwen', env: ['A', 'B'] });
    expect(agentConfigForAttempt(mixed, 1).preset).toBeUndefined();
  });

  it('without a rotation, is the base agent for every attempt', () => {
    const single = agentOf({ kind: 'command', command: ['x'] });
    expect(agentConfigForAttempt(single, 7)).toMatchObject({ kind: 'command', command: ['x'] });
  });

  it('runs and names the agent whose turn it is', async () => {
    const rotating = new RotatingAgent([fake('first'), fake('second')]);
    expect(rotating.label).toBe('rotation(first | second)');
    expect(agentForAttempt(rotating, 4).label).toBe('second');
    expect((await rotating.run({ attempt: 3 } as AgentRunInput)).log).toBe('first');
    const plain = fake('plain');
    expect(agentForAttempt(plain, 2)).toBe(plain);
  });
});
