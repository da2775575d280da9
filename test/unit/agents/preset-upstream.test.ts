import { describe, expect, it } from 'vitest';
import { checkPresetUpstreams, presetUpstream, signingKeysWarning } from '../../../src/agents/command/preset-upstream.js';
import { PRESETS } from '../../../src/agents/command/presets/index.js';
import { GenesisError } from '../../../src/errors/genesis-error.js';
import { manifestSchema } from '../../../src/manifest/schema.js';

const manifest = (agent: Record<string, unknown>) =>
  manifestSchema.parse({ name: 'w', goal: { outcome: 'x' }, verify: { test: 'true' }, agent: { kind: 'command', ...agent } });

/** The vendor's endpoint each preset's CLI is put in front of through the gateway when world.yaml names none. */
describe('the endpoint behind the gateway of a preset without agent.baseUrl', () => {
  it("is each vendor's own API root for the model the preset configures", () => {
    expect(presetUpstream({ preset: 'claude-code' })).toBe('https://api.anthropic.com');
    expect(presetUpstream({ preset: 'codex' })).toBe('https://api.openai.com/v1');
    expect(presetUpstream({ preset: 'gemini' })).toBe('https://generativelanguage.googleapis.com');
    expect(presetUpstream({ preset: 'copilot', model: 'gpt-5' })).toBe('https://api.openai.com/v1');
    expect(presetUpstream({ preset: 'qwen-code' })).toBe('https://dashscope.aliyuncs.com/compatible-mode/v1');
  });

  it('is, for opencode, the API root of the provider agent.model names, and none for a provider Genesis cannot place', () => {
    expect(presetUpstream({ preset: 'opencode', model: 'anthropic/claude-sonnet-4-5' })).toBe('https://api.anthropic.com/v1');
    expect(presetUpstream({ preset: 'opencode', model: 'openai/gpt-5' })).toBe('https://api.openai.com/v1');
    expect(presetUpstream({ preset: 'opencode', model: 'google/gemini-2.5-pro' })).toBe('https://generativelanguage.googleapis.com/v1beta');
    expect(presetUpstream({ preset: 'opencode', model: 'openrouter/x-ai/grok-4' })).toBeNull();
    expect(presetUpstream({ preset: 'opencode', model: 'gpt-5' })).toBeNull();
    expect(presetUpstream({ preset: 'opencode' })).toBeNull();
    expect(presetUpstream({ preset: 'aider', model: 'gpt-4.1' })).toBeNull();
  });

  it('refuses a world whose preset could only reach its model past the gateway, saying to set agent.baseUrl', () => {
    const refused = (agent: Record<string, unknown>) => {
      try {
        checkPresetUpstreams(manifest(agent));
      } catch (error) {
        return error;
      }
      return null;
    };
    const aider = refused({ preset: 'aider', model: 'gpt-4.1' });
    expect(aider).toBeInstanceOf(GenesisError);
    expect(aider).toMatchObject({
      code: 'agent-endpoint-unknown',
      message: expect.stringContaining('agent.preset aider has no endpoint Genesis knows for the model gpt-4.1'),
    });
    expect((aider as GenesisError).hint).toContain('set agent.baseUrl');
    const rotated = refused({ preset: 'claude-code', rotation: [{}, { preset: 'opencode', model: 'openrouter/x' }] });
    expect(rotated).toMatchObject({ code: 'agent-endpoint-unknown', message: expect.stringContaining('agent.rotation[1].preset opencode') });
    expect((rotated as GenesisError).hint).toContain('anthropic/…, openai/… or google/…');
    expect(refused({ preset: 'aider', model: 'openai/m', baseUrl: 'http://127.0.0.1:8080/v1' })).toBeNull();
    expect(refused({ preset: 'opencode', model: 'anthropic/claude-sonnet-4-5' })).toBeNull();
    expect(refused({ command: ['./my-agent'] })).toBeNull();
  });
});

describe("a preset pointed at the gateway in place of its vendor's endpoint", () => {
  const gateway = 'http://127.0.0.1:7811/v1';

  it("keeps opencode's own provider for the model and moves only its baseURL", () => {
    const o = { args: [], sandboxed: true, model: 'anthropic/claude-sonnet-4-5', baseUrl: gateway, vendorEndpoint: true };
    const config = JSON.parse(PRESETS.opencode.launch!(o).homeFiles['.config/opencode/opencode.json']!);
    expect(config.provider).toEqual({ anthropic: { options: { baseURL: gateway } } });
    expect(PRESETS.opencode.argv(o)).toEqual(expect.arrayContaining(['--model', 'anthropic/claude-sonnet-4-5']));
  });

  it("puts Copilot in its own-model mode on OpenAI's API type, whatever provider type this host names", () => {
    const env = PRESETS.copilot.launch!({ args: [], sandboxed: true, baseUrl: gateway, vendorEndpoint: true }).env;
    expect(env).toMatchObject({ COPILOT_PROVIDER_BASE_URL: gateway, COPILOT_PROVIDER_TYPE: 'openai', COPILOT_OFFLINE: 'true' });
    expect(PRESETS.copilot.launch!({ args: [], sandboxed: true, baseUrl: gateway }).env.COPILOT_PROVIDER_TYPE).toBeUndefined();
  });

  it('gives Qwen Code and Aider the URL in the variable each reads', () => {
    expect(PRESETS['qwen-code'].launch!({ args: [], sandboxed: true, baseUrl: gateway, vendorEndpoint: true }).env.OPENAI_BASE_URL).toBe(gateway);
    expect(PRESETS.aider.launch!({ args: [], sandboxed: true, baseUrl: gateway }).env.OPENAI_API_BASE).toBe(gateway);
  });
});

describe('keys that sign each request', () => {
  const agent = (config: Record<string, unknown>) => manifest(config).agent;

  it('are warned of when a preset would pass them into the sandbox, since no gateway can swap them', () => {
    const warning = signingKeysWarning([agent({ preset: 'claude-code' })], { AWS_SECRET_ACCESS_KEY: 'x', AWS_ACCESS_KEY_ID: 'y', ANTHROPIC_API_KEY: 'z' });
    expect(warning).toContain('AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY in its sandbox');
    expect(warning).toContain('cannot be swapped by the model gateway');
    expect(
      signingKeysWarning([agent({ preset: 'codex' }), agent({ command: ['./a'], env: ['GOOGLE_APPLICATION_CREDENTIALS'] })], {
        GOOGLE_APPLICATION_CREDENTIALS: '/k.json',
      }),
    ).toContain('GOOGLE_APPLICATION_CREDENTIALS');
  });

  it('are not warned of when this host has none, or the agent is not given them', () => {
    expect(signingKeysWarning([agent({ preset: 'claude-code' })], { ANTHROPIC_API_KEY: 'z' })).toBeNull();
    expect(signingKeysWarning([agent({ preset: 'codex' })], { AWS_SECRET_ACCESS_KEY: 'x' })).toBeNull();
  });
});
