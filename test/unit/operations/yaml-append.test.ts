import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { appendToYamlList } from '../../../src/operations/yaml-append.js';

const PY_RATCHET = readFileSync(new URL('../../../worlds/py-ratchet/world.yaml', import.meta.url), 'utf8');
const task = { id: 'title', title: 'title(text)', paths: ['textkit/title.py'], description: 'line one\nline two: with "quotes"', dependsOn: ['slug'] };

/** The lines of `after` that `before` lacks, when `after` only gained lines. */
function addedLines(before: string, after: string): string[] {
  const old = before.split('\n');
  const next = after.split('\n');
  const start = old.findIndex((line, i) => line !== next[i]);
  if (start === -1) return next.slice(old.length);
  const added = next.length - old.length;
  expect(next.slice(start + added)).toEqual(old.slice(start));
  return next.slice(start, start + added);
}

describe('appendToYamlList', () => {
  it("adds only the new task's lines to a hand-written world.yaml: comments, folded text and flow maps stay as written", () => {
    const after = appendToYamlList(PY_RATCHET, 'tasks', task);
    const added = addedLines(PY_RATCHET, after);
    expect(added[0]).toBe('  - id: title');
    expect(added.every((l) => l.startsWith('    ') || l.startsWith('  - '))).toBe(true);
    expect(parse(after).tasks.at(-1)).toEqual(task);
    expect(parse(after).tasks).toHaveLength(4);
  });

  it('writes the task at the end of the list when other keys and comments follow it', () => {
    const text = '# mine\ntasks:\n- id: a   # first\n  paths: [a.js]\n\n# the end\nparallelism: 2 # two\n';
    const after = appendToYamlList(text, 'tasks', { id: 'b', paths: ['b.js'] });
    expect(addedLines(text, after)).toEqual(['- id: b', '  paths:', '    - b.js']);
    expect(parse(after)).toEqual({
      tasks: [
        { id: 'a', paths: ['a.js'] },
        { id: 'b', paths: ['b.js'] },
      ],
      parallelism: 2,
    });
  });

  it('starts the list when the manifest has none', () => {
    const text = 'name: w # the name\n';
    const after = appendToYamlList(text, 'tasks', { id: 'a' });
    expect(after).toBe('name: w # the name\ntasks:\n  - id: a\n');
  });

  it('goes through the yaml Document for a flow list, and the result still reads as the list plus the task', () => {
    const text = 'name: w\ntasks: [{ id: a }] # inline\n';
    const after = appendToYamlList(text, 'tasks', { id: 'b' });
    expect(parse(after)).toEqual({ name: 'w', tasks: [{ id: 'a' }, { id: 'b' }] });
    expect(after).toContain('# inline');
  });
});
