import { describe, expect, it } from 'vitest';
import { GEMINI_PROMPT } from '../../../src/agents/command/presets/gemini.js';
import { PRESETS } from '../../../src/agents/command/presets/index.js';
import { OPENCODE_MESSAGE, OPENCODE_TITLE } from '../../../src/agents/command/presets/opencode.js';
import { COPILOT_USAGE_FILE } from '../../../src/agents/command/presets/copilot.js';
import { QWEN_PROMPT } from '../../../src/agents/command/presets/qwen-code.js';

const plain = { args: [], sandboxed: false };

describe('the command each preset runs', () => {
  it('runs Claude Code in print mode with stream-json output and no permission prompts', () => {
    expect(PRESETS['claude-code'].argv(plain)).toEqual(['claude', '-p', '--output-format', 'stream-json', '--verbose', '--dangerously-skip-permissions']);
  });

  it('runs codex exec with JSON events, reading the prompt from stdin, and its own sandbox only outside ours (it has no --full-auto)', () => {
    expect(PRESETS.codex.argv(plain)).toEqual(['codex', 'exec', '--json', '-s', 'workspace-write', '-']);
    expect(PRESETS.codex.argv({ ...plain, sandboxed: true })).toEqual(['codex', 'exec', '--json', '--dangerously-bypass-approvals-and-sandbox', '-']);
  });

  it('runs Aider on the prompt file with auto-commits off and nothing written beside the change', () => {
    const argv = PRESETS.aider.argv(plain);
    expect(argv.slice(0, 3)).toEqual(['aider', '--message-file', '{promptFile}']);
    expect(argv).toEqual(expect.arrayContaining(['--no-auto-commits', '--no-dirty-commits', '--no-gitignore', '--yes-always']));
  });

  it('runs opencode run and gemini with the prompt on stdin and a short message pointing at it', () => {
    expect(PRESETS.opencode.argv(plain)).toEqual([
      'opencode',
      'run',
      '--format',
      'json',
      '--title',
      OPENCODE_TITLE,
      '--print-logs',
      '--log-level',
      'ERROR',
      OPENCODE_MESSAGE,
    ]);
    expect(PRESETS.gemini.argv(plain)).toEqual(['gemini', '--output-format', 'json', '--yolo', '--skip-trust', '--prompt', GEMINI_PROMPT]);
  });

  it('passes agent.model as --model and appends agent.args before any trailing prompt argument', () => {
    expect(PRESETS.codex.argv({ model: 'o4-mini', args: ['-c', 'x=1'], sandboxed: false })).toEqual([
      'codex',
      'exec',
      '--json',
      '-s',
      'workspace-write',
      '--model',
      'o4-mini',
      '-c',
      'x=1',
      '-',
    ]);
    expect(PRESETS.gemini.argv({ model: 'gemini-2.5-flash', args: ['--debug'], sandboxed: false }).slice(5)).toEqual([
      '--model',
      'gemini-2.5-flash',
      '--debug',
      '--prompt',
      GEMINI_PROMPT,
    ]);
  });

  it('names the credentials each preset passes through', () => {
    expect(PRESETS['claude-code'].env).toContain('ANTHROPIC_API_KEY');
    expect(PRESETS.codex.env).toContain('OPENAI_API_KEY');
    expect(PRESETS.gemini.env).toContain('GEMINI_API_KEY');
    expect(PRESETS.aider.env).toEqual(expect.arrayContaining(['OPENAI_API_KEY', 'ANTHROPIC_API_KEY']));
    expect(PRESETS.opencode.env).toEqual(expect.arrayContaining(['OPENAI_API_KEY', 'ANTHROPIC_API_KEY']));
  });

  it('passes agent.baseUrl the way each pinned CLI reads it: a variable, a Codex provider, an opencode provider', () => {
    const at = { ...plain, model: 'my-model', sandboxed: true };
    expect(PRESETS['claude-code'].launch!({ ...at, baseUrl: 'http://127.0.0.1:8080' }).env).toMatchObject({
      ANTHROPIC_BASE_URL: 'http://127.0.0.1:8080',
      DISABLE_TELEMETRY: '1',
    });
    const codex = PRESETS.codex.launch!({ ...at, baseUrl: 'http://127.0.0.1:8080/v1' }).homeFiles['.codex/config.toml']!;
    expect(codex).toContain('model_provider = "genesis"');
    expect(codex).toContain(
      '[model_providers.genesis]\nname = "genesis"\nbase_url = "http://127.0.0.1:8080/v1"\nenv_key = "OPENAI_API_KEY"\nwire_api = "responses"',
    );
    expect(PRESETS.codex.launch!(at).homeFiles['.codex/config.toml']).not.toContain('model_provider');
    expect(PRESETS.gemini.launch!({ ...at, baseUrl: 'http://127.0.0.1:8080' }).env.GOOGLE_GEMINI_BASE_URL).toBe('http://127.0.0.1:8080');
    expect(JSON.parse(PRESETS.gemini.launch!(at).homeFiles['.gemini/settings.json']!)).toMatchObject({
      security: { auth: { selectedType: 'gemini-api-key' } },
    });
    const opencode = { ...at, baseUrl: 'http://127.0.0.1:8080/v1', price: { inputPerMTok: 1, outputPerMTok: 2 } };
    expect(PRESETS.opencode.argv(opencode)).toEqual(expect.arrayContaining(['--model', 'genesis/my-model']));
    expect(JSON.parse(PRESETS.opencode.launch!(opencode).homeFiles['.config/opencode/opencode.json']!).provider.genesis).toEqual({
      npm: '@ai-sdk/openai-compatible',
      name: 'genesis',
      options: { baseURL: 'http://127.0.0.1:8080/v1', apiKey: '{env:OPENAI_API_KEY}' },
      models: { 'my-model': { name: 'my-model', cost: { input: 1, output: 2, cache_read: 1 } } },
    });
    // Without a baseUrl, opencode's own provider/model names stay as written.
    expect(PRESETS.opencode.argv({ ...at, model: 'anthropic/claude-sonnet-4-5' })).toEqual(expect.arrayContaining(['--model', 'anthropic/claude-sonnet-4-5']));
  });

  it('runs Copilot CLI with JSON events, tools approved, and a usage report in its HOME; in its own-model mode for agent.baseUrl, offline', () => {
    expect(PRESETS.copilot.argv({ ...plain, model: 'my-model', args: ['--debug'] })).toEqual([
      'copilot',
      '--output-format',
      'json',
      '--allow-all-tools',
      '--no-ask-user',
      '--no-auto-update',
      '--disable-client-telemetry',
      `--usage-output-file=~/${COPILOT_USAGE_FILE}`,
      '--model',
      'my-model',
      '--debug',
    ]);
    const byok = PRESETS.copilot.launch!({ ...plain, baseUrl: 'http://127.0.0.1:8080/v1' });
    expect(byok.env).toEqual({ COPILOT_PROVIDER_BASE_URL: 'http://127.0.0.1:8080/v1', COPILOT_OFFLINE: 'true', COPILOT_AUTO_UPDATE: 'false' });
    expect(byok.outputFiles).toEqual([COPILOT_USAGE_FILE]);
    expect(JSON.parse(byok.homeFiles['.copilot/settings.json']!)).toEqual({ autoUpdate: false, banner: 'never' });
    // GitHub's own models need GitHub: not offline without a baseUrl.
    expect(PRESETS.copilot.launch!(plain).env).toEqual({ COPILOT_AUTO_UPDATE: 'false' });
    expect(PRESETS.copilot.env).toEqual(expect.arrayContaining(['COPILOT_PROVIDER_API_KEY']));
    // A GitHub login would enter the sandbox as it is: Copilot runs only in its own-model mode, behind the gateway.
    expect(PRESETS.copilot.env).not.toContain('COPILOT_GITHUB_TOKEN');
    expect(PRESETS.copilot.env).not.toContain('GITHUB_TOKEN');
  });

  it('runs Qwen Code with stream-json and --yolo, the prompt on stdin; OPENAI_BASE_URL for agent.baseUrl; telemetry, updates and memory off', () => {
    expect(PRESETS['qwen-code'].argv({ ...plain, model: 'qwen3-coder' })).toEqual([
      'qwen',
      '--output-format',
      'stream-json',
      '--yolo',
      '--model',
      'qwen3-coder',
      QWEN_PROMPT,
    ]);
    const launch = PRESETS['qwen-code'].launch!({ ...plain, sandboxed: true, baseUrl: 'http://127.0.0.1:8080/v1' });
    expect(launch.env).toEqual({ OPENAI_BASE_URL: 'http://127.0.0.1:8080/v1', QWEN_CODE_SUPPRESS_YOLO_WARNING: '1' });
    expect(JSON.parse(launch.homeFiles['.qwen/settings.json']!)).toEqual({
      security: { auth: { selectedType: 'openai' } },
      general: { enableAutoUpdate: false },
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
      memory: { enableManagedAutoMemory: false, enableManagedAutoDream: false },
    });
    // Unconfined, its warning that --yolo runs with the user's own rights is true and kept.
    expect(PRESETS['qwen-code'].launch!(plain).env).toEqual({});
  });
});
