import { describe, expect, it } from 'vitest';
import { parseManifest } from '../../../src/manifest/parse.js';
import { stringify } from 'yaml';

function parse(agent: Record<string, unknown>) {
  return parseManifest(stringify({ name: 'w', goal: { outcome: 'x' }, verify: { test: 'npm test' }, agent }));
}

describe('the agent section of world.yaml', () => {
  it('fills the defaults of a preset agent: the auto sandbox, no rotation, the default prompt', () => {
    const { manifest, errors } = parse({ kind: 'command', preset: 'claude-code' });
    expect(errors).toEqual([]);
    expect(manifest!.agent).toMatchObject({
      kind: 'command',
      preset: 'claude-code',
      sandbox: 'auto',
      network: 'genesis-agents',
      rotation: [],
      maxTurns: 50,
      env: [],
    });
    expect(manifest!.agent.promptTemplate).toBeUndefined();
  });

  it('refuses an unknown preset and lists the known ones', () => {
    const { errors } = parse({ kind: 'command', preset: 'cursor-agent' });
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^agent\.preset: Invalid option: expected one of "claude-code"\|"codex"\|"aider"\|"opencode"\|"gemini"\|"copilot"\|"qwen-code"/);
  });

  it('refuses a preset on an agent that is not a command agent', () => {
    expect(parse({ kind: 'openai', preset: 'codex', baseUrl: 'http://localhost:8000/v1', model: 'm' }).errors).toEqual([
      'agent.preset: a preset is a command agent; set kind: command or remove preset',
    ]);
  });

  it('requires baseUrl and model for the openai agent, with examples', () => {
    expect(parse({ kind: 'openai' }).errors).toEqual([
      'agent.baseUrl: required when agent.kind is "openai" (the API root, e.g. https://api.openai.com/v1 or http://localhost:11434/v1)',
      'agent.model: required when agent.kind is "openai" (the model name the endpoint serves)',
    ]);
  });

  it('refuses a baseUrl that is not an http(s) URL and an apiKeyEnv that is not a variable name', () => {
    const { errors } = parse({ kind: 'openai', baseUrl: 'localhost:8000', model: 'm', apiKeyEnv: 'MY KEY' });
    expect(errors.map((e) => e.split(':')[0])).toEqual(['agent.baseUrl', 'agent.apiKeyEnv']);
  });

  it('checks every rotation entry as the agent it becomes', () => {
    const { errors } = parse({ kind: 'command', preset: 'aider', rotation: [{}, { kind: 'openai', model: 'm' }, { preset: 'nope' }] });
    expect(errors).toEqual([expect.stringMatching(/^agent\.rotation\[2\]\.preset: Invalid option/)]);
    expect(parse({ kind: 'command', preset: 'aider', rotation: [{ kind: 'openai', model: 'm' }] }).errors).toEqual([
      'agent.rotation[0].baseUrl: required when agent.kind is "openai" (the API root, e.g. https://api.openai.com/v1 or http://localhost:11434/v1)',
    ]);
  });

  it('refuses a prompt template with an unknown placeholder', () => {
    expect(parse({ kind: 'command', preset: 'codex', promptTemplate: 'Do {{task}}' }).errors).toEqual([
      expect.stringMatching(/^agent\.promptTemplate: unknown placeholder \{\{task\}\}; known: acceptance, attempt, check/),
    ]);
  });

  it('warns that a sandbox does nothing for an in-process agent, and that a listed API key reaches commands', () => {
    expect(parse({ kind: 'script', script: 'r.yaml', sandbox: 'docker' }).warnings).toEqual([
      'agent.sandbox: docker has no effect on a script agent, which runs inside Genesis',
    ]);
    expect(
      parse({ kind: 'openai', baseUrl: 'https://api.openai.com/v1', model: 'gpt-4.1', apiKeyEnv: 'OPENAI_API_KEY', env: ['OPENAI_API_KEY'] }).warnings,
    ).toEqual(['agent.env: lists OPENAI_API_KEY, the API key, so the commands the agent runs can read it too']);
  });

  it('takes a price override', () => {
    const { manifest } = parse({ kind: 'openai', baseUrl: 'http://localhost:11434/v1', model: 'qwen2.5-coder', price: { inputPerMTok: 0, outputPerMTok: 0 } });
    expect(manifest!.agent.price).toEqual({ inputPerMTok: 0, outputPerMTok: 0 });
  });
});

describe('the confinement fields of the agent section', () => {
  const parseAgent = (agent: Record<string, unknown>) =>
    parseManifest(stringify({ name: 'w', goal: { outcome: 'x' }, verify: { test: 'true' }, agent: { kind: 'command', command: ['a'], ...agent } }));

  it('accepts an allow-list with the default sandbox, and refuses it where it cannot be enforced', () => {
    expect(parseAgent({ network: { allow: ['api.anthropic.com', '*.openai.com'] } }).errors).toEqual([]);
    expect(parseAgent({ sandbox: 'docker', network: { allow: ['api.anthropic.com'] } }).errors).toEqual([
      'agent.network.allow: an allow-list is enforced by the auto (bubblewrap) agent sandbox, not by agent.sandbox: docker; remove agent.sandbox or the list',
    ]);
    expect(parseAgent({ network: { allow: [] } }).errors).toEqual([expect.stringMatching(/^agent\.network(\.allow)?: /)]);
    expect(parseAgent({ network: { allow: ['http://x.com/'] } }).errors).toEqual([expect.stringMatching(/^agent\.network(\.allow\[0\])?: /)]);
  });

  it('warns that a disk quota does nothing for an unconfined agent', () => {
    expect(parseAgent({ sandbox: 'none', limits: { diskMb: 512 } }).warnings).toContain(
      'agent.limits.diskMb: has no effect with agent.sandbox: none (an unconfined agent can write anywhere you can)',
    );
  });

  it('refuses a HOME file outside HOME', () => {
    expect(parseAgent({ homeFiles: ['../etc/shadow'] }).errors).toEqual([expect.stringMatching(/^agent\.homeFiles\[0\]: a path relative to your HOME/)]);
    expect(parseAgent({ homeFiles: ['/etc/shadow'] }).errors).toEqual([expect.stringMatching(/^agent\.homeFiles\[0\]: /)]);
    expect(parseAgent({ homeFiles: ['.codex/auth.json'] }).errors).toEqual([]);
  });
});
