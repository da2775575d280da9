import { describe, expect, it } from 'vitest';
import { DEFAULT_PROMPT_TEMPLATE, PROMPT_PLACEHOLDERS } from '../../../src/manifest/prompt-placeholders.js';
import { checkPromptTemplate, PromptTemplateError, renderPromptTemplate } from '../../../src/manifest/prompt-template.js';
import { composePrompt } from '../../../src/episode/prompt.js';
import { manifestSchema } from '../../../src/manifest/schema.js';

describe('the prompt template language', () => {
  it('replaces placeholders, joining lists with commas', () => {
    expect(renderPromptTemplate('{{goal}} in {{ paths }}', { goal: 'Build', paths: ['a', 'b'] })).toBe('Build in a, b');
  });

  it('keeps a section for a non-empty value and drops it for an empty one', () => {
    const t = 'A{{#note}} [{{note}}]{{/note}}{{^note}} (no note){{/note}}';
    expect(renderPromptTemplate(t, { note: 'hi' })).toBe('A [hi]');
    expect(renderPromptTemplate(t, { note: '' })).toBe('A (no note)');
  });

  it('repeats a section per item of a list, with {{.}} for the item', () => {
    expect(renderPromptTemplate('{{#rules}}- {{.}}\n{{/rules}}', { rules: ['one', 'two'] })).toBe('- one\n- two\n');
    expect(renderPromptTemplate('{{#rules}}- {{.}}\n{{/rules}}', { rules: [] })).toBe('');
  });

  it('removes lines that hold only a section tag, so sections leave no blank lines', () => {
    expect(renderPromptTemplate('a\n{{#x}}\nx is {{x}}\n{{/x}}\nb\n', { x: '' })).toBe('a\nb\n');
    expect(renderPromptTemplate('a\n  {{#x}}\nx is {{x}}\n  {{/x}}\nb\n', { x: '1' })).toBe('a\nx is 1\nb\n');
  });

  it('never reads a value as template text', () => {
    expect(renderPromptTemplate('{{goal}}', { goal: '{{goal}} {{#x}}' })).toBe('{{goal}} {{#x}}');
  });

  it('refuses an unknown placeholder, naming the known ones', () => {
    expect(() => renderPromptTemplate('{{gaol}}', { goal: 'x' })).toThrow(PromptTemplateError);
    expect(checkPromptTemplate('{{gaol}}', ['goal'])).toEqual(['unknown placeholder {{gaol}}; known: goal']);
  });

  it('refuses sections that are not closed or closed out of order', () => {
    expect(checkPromptTemplate('{{#goal}}x', ['goal'])).toEqual(['section {{#goal}} is never closed with {{/goal}}']);
    expect(checkPromptTemplate('{{#goal}}{{#title}}{{/goal}}{{/title}}', ['goal', 'title'])[0]).toMatch(/^\{\{\/goal\}\} closes a section that is not open/);
    expect(checkPromptTemplate('{{.}}', ['goal'])[0]).toMatch(/only stand inside/);
  });

  it('has a default template that uses only documented placeholders', () => {
    expect(checkPromptTemplate(DEFAULT_PROMPT_TEMPLATE, Object.keys(PROMPT_PLACEHOLDERS))).toEqual([]);
  });
});

describe('agent.promptTemplate', () => {
  const manifest = (promptTemplate?: string) =>
    manifestSchema.parse({
      name: 'calc',
      goal: { outcome: 'A calculator.', constraints: ['No dependencies.'] },
      verify: { test: 'npm test' },
      agent: { kind: 'script', script: 'r.yaml', ...(promptTemplate ? { promptTemplate } : {}) },
      tasks: [{ id: 'add', title: 'add(a, b)', paths: ['src/add.js'], check: 'node --test test/add.test.js' }],
    });

  it('renders the episode prompt from the manifest template', () => {
    const m = manifest(
      'Task {{taskId}} of {{world}}, attempt {{attempt}}/{{maxAttempts}}: {{title}}\nRun: {{testCommands}}\n{{#constraints}}* {{.}}\n{{/constraints}}',
    );
    expect(composePrompt({ manifest: m, task: m.tasks[0]!, attempt: 2, earlier: [] })).toBe(
      'Task add of calc, attempt 2/3: add(a, b)\nRun: npm test and node --test test/add.test.js\n* No dependencies.\n',
    );
  });

  it('uses the default template when none is set', () => {
    const m = manifest();
    expect(composePrompt({ manifest: m, task: m.tasks[0]!, attempt: 1, earlier: [] })).toMatch(
      /^# World "calc": task add \(attempt 1 of 3\)\n\n## Goal\nA calculator\.\n/,
    );
  });
});
