import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ToolCall } from '../../../src/agents/openai/chat/wire.js';
import { searchFiles } from '../../../src/agents/openai/file-tools.js';
import { callTool, TOOL_SPECS, type ToolContext } from '../../../src/agents/openai/tools.js';
import { tempDir } from '../../helpers/temp-dir.js';

async function workspace(files: Record<string, string> = {}): Promise<ToolContext> {
  const dir = join(await tempDir('genesis-tools-'), 'ws');
  for (const [path, content] of Object.entries(files)) {
    await mkdir(join(dir, path, '..'), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  await mkdir(dir, { recursive: true });
  return { workspace: dir, runCommand: async (command) => `ran ${command}` };
}

const call = (name: string, args: unknown): ToolCall => ({
  id: 'c1',
  type: 'function',
  function: { name, arguments: typeof args === 'string' ? args : JSON.stringify(args) },
});

describe('the tools of the openai agent', () => {
  it('describes every tool with a JSON schema of its arguments', () => {
    expect(TOOL_SPECS.map((t) => t.function.name)).toEqual(['list_files', 'read_file', 'search', 'write_file', 'edit_file', 'run_command', 'finish']);
    expect(TOOL_SPECS.find((t) => t.function.name === 'write_file')!.function.parameters).toMatchObject({ type: 'object', required: ['path', 'content'] });
    expect(JSON.stringify(TOOL_SPECS)).not.toContain('$schema');
  });

  it('lists files recursively, skipping .git and node_modules', async () => {
    const c = await workspace({ 'src/a.js': '', 'README.md': '', '.git/HEAD': '', 'node_modules/x/index.js': '' });
    expect((await callTool(call('list_files', { recursive: true }), c)).content).toBe('README.md\nsrc/\nsrc/a.js');
  });

  it('reads a window of lines', async () => {
    const c = await workspace({ 'f.txt': 'one\ntwo\nthree\nfour\n' });
    expect((await callTool(call('read_file', { path: 'f.txt', offset: 2, limit: 2 }), c)).content).toBe('two\nthree');
  });

  it('searches with a regular expression and answers path:line: text', async () => {
    const c = await workspace({ 'src/a.js': 'const x = 1;\nexport const a = 2;\n', 'src/b.js': 'export let b;\n' });
    expect((await callTool(call('search', { pattern: '^export const' }), c)).content).toBe('src/a.js:2: export const a = 2;');
  });

  it('ends a search whose pattern backtracks without end at its deadline, with an error the model reads, and keeps the event loop turning', async () => {
    const c = await workspace({ 'ok.txt': 'aaa\n', 'bait.txt': `${'a'.repeat(52)}!\n` });
    let ticks = 0;
    const ticking = setInterval(() => ticks++, 20);
    const started = Date.now();
    try {
      // One search over both files: the bait alone would take longer than any episode.
      await expect(searchFiles(c.workspace, { pattern: '^(a+)+$' }, 1000)).rejects.toThrow(/the search took longer than 1 s and was stopped/);
    } finally {
      clearInterval(ticking);
    }
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(1000);
    expect(elapsed).toBeLessThan(4000);
    // The loop ran its timer all along: the expression never ran on it.
    expect(ticks).toBeGreaterThan(elapsed / 20 / 3);
    // The same pattern where it does not blow up still answers, and a wrong pattern is an error at once.
    expect(await searchFiles(c.workspace, { pattern: '^(a+)+$', path: 'ok.txt' }, 1000)).toBe('ok.txt:1: aaa');
    expect(await callTool(call('search', { pattern: '(' }), c)).toMatchObject({
      failed: true,
      content: expect.stringMatching(/^error: pattern is not a valid regular expression/),
    });
  });

  it('edits one exact occurrence and refuses an ambiguous one', async () => {
    const c = await workspace({ 'f.js': 'a a b' });
    expect(await callTool(call('edit_file', { path: 'f.js', old_text: 'a', new_text: 'z' }), c)).toMatchObject({
      failed: true,
      malformed: false,
      content: expect.stringContaining('occurs 2 times'),
    });
    expect(await callTool(call('edit_file', { path: 'f.js', old_text: 'b', new_text: 'c' }), c)).toMatchObject({
      failed: false,
      content: 'edited f.js (1 replacement)',
    });
    expect(await callTool(call('edit_file', { path: 'f.js', old_text: 'a', new_text: '$&$&', replace_all: true }), c)).toMatchObject({ failed: false });
    expect(await readFile(join(c.workspace, 'f.js'), 'utf8')).toBe('$&$& $&$& c');
  });

  it('refuses paths outside the workspace, lexically and through symlinks, and writes into .git', async () => {
    const c = await workspace({ 'ok.txt': 'ok' });
    await symlink('/etc', join(c.workspace, 'etc'));
    await symlink('../..', join(c.workspace, 'up'));
    for (const [name, args, why] of [
      ['read_file', { path: '../x' }, 'is outside the workspace'],
      ['read_file', { path: '/etc/passwd' }, 'is outside the workspace'],
      ['read_file', { path: 'etc/passwd' }, 'through a symbolic link'],
      ['list_files', { path: 'up' }, 'through a symbolic link'],
      ['write_file', { path: 'up/new.txt', content: 'x' }, 'through a symbolic link'],
      ['write_file', { path: '.git/hooks/post-checkout', content: 'x' }, 'inside .git'],
    ] as const) {
      expect(await callTool(call(name, args), c), `${name} ${JSON.stringify(args)}`).toMatchObject({
        failed: true,
        malformed: false,
        content: expect.stringContaining(why),
      });
    }
  });

  it('accepts an absolute path inside the workspace', async () => {
    const c = await workspace({ 'ok.txt': 'ok' });
    expect((await callTool(call('read_file', { path: join(c.workspace, 'ok.txt') }), c)).content).toBe('ok');
  });

  describe('when a call is malformed', () => {
    it('answers arguments that are not JSON', async () => {
      expect(await callTool(call('read_file', '{"path": '), await workspace())).toMatchObject({
        malformed: true,
        content: expect.stringMatching(/^error: the arguments of read_file are not valid JSON/),
      });
    });

    it('answers an unknown tool with the list of tools', async () => {
      expect(await callTool(call('delete_everything', {}), await workspace())).toMatchObject({
        malformed: true,
        content: expect.stringContaining('the tools are list_files, read_file'),
      });
    });

    it('answers arguments that do not fit the schema, naming the field', async () => {
      expect(await callTool(call('write_file', { path: 'x' }), await workspace())).toMatchObject({
        malformed: true,
        content: expect.stringMatching(/^error: wrong arguments for write_file: content:/),
      });
    });
  });

  it('hands run_command to the sandboxed runner and finish its summary', async () => {
    const c = await workspace();
    expect((await callTool(call('run_command', { command: 'npm test' }), c)).content).toBe('ran npm test');
    expect(await callTool(call('finish', { summary: 'done' }), c)).toMatchObject({ finished: 'done', malformed: false });
  });
});
