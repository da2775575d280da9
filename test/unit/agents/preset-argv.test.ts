import { describe, expect, it } from 'vitest';
import { GEMINI_PROMPT } from '../../../src/agents/command/presets/gemini.js';
import { PRESETS } from '../../../src/agents/command/presets/index.js';
import { OPENCODE_MESSAGE } from '../../../src/agents/command/presets/opencode.js';

const plain = { args: [], sandboxed: false };

describe('the command each preset runs', () => {
  it('runs Claude Code in print mode with stream-json output and no permission prompts', () => {
    expect(PRESETS['claude-code'].argv(plain)).toEqual(['claude', '-p', '--output-format', 'stream-json', '--verbose', '--dangerously-skip-permissions']);
  });

  it('runs codex exec with JSON events, reading the prompt from stdin, and its own sandbox only outside ours', () => {
    expect(PRESETS.codex.argv(plain)).toEqual(['codex', 'exec', '--json', '--full-auto', '-']);
    expect(PRESETS.codex.argv({ ...plain, sandboxed: true })).toEqual(['codex', 'exec', '--json', '--dangerously-bypass-approvals-and-sandbox', '-']);
  });

  it('runs Aider on the prompt file with auto-commits off and nothing written beside the change', () => {
    const argv = PRESETS.aider.argv(plain);
    expect(argv.slice(0, 3)).toEqual(['aider', '--message-file', '{promptFile}']);
    expect(argv).toEqual(expect.arrayContaining(['--no-auto-commits', '--no-dirty-commits', '--no-gitignore', '--yes-always']));
  });

  it('runs opencode run and gemini with the prompt on stdin and a short message pointing at it', () => {
    expect(PRESETS.opencode.argv(plain)).toEqual(['opencode', 'run', '--format', 'json', OPENCODE_MESSAGE]);
    expect(PRESETS.gemini.argv(plain)).toEqual(['gemini', '--output-format', 'json', '--yolo', '--prompt', GEMINI_PROMPT]);
  });

  it('passes agent.model as --model and appends agent.args before any trailing prompt argument', () => {
    expect(PRESETS.codex.argv({ model: 'o4-mini', args: ['-c', 'x=1'], sandboxed: false })).toEqual([
      'codex',
      'exec',
      '--json',
      '--full-auto',
      '--model',
      'o4-mini',
      '-c',
      'x=1',
      '-',
    ]);
    expect(PRESETS.gemini.argv({ model: 'gemini-2.5-flash', args: ['--debug'], sandboxed: false }).slice(4)).toEqual([
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
});
