import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { readManifest } from '../../../src/manifest/parse.js';

const ROOT = resolve(import.meta.dirname, '../../..');

function pages(): string[] {
  const found = [join(ROOT, 'README.md')];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(dir, entry.name));
      else if (entry.name.endsWith('.md')) found.push(join(dir, entry.name));
    }
  };
  walk(join(ROOT, 'docs'));
  return found;
}

/** The `agent:` blocks a page shows: each yaml block whose top level is `agent`, one per `agent:` line when it shows several. */
function agentBlocks(markdown: string): string[] {
  const blocks: string[] = [];
  for (const m of markdown.matchAll(/^```yaml\n([\s\S]*?)^```$/gm)) {
    const text = m[1]!;
    const tops = text.split('\n').filter((line) => /^agent:/.test(line));
    if (tops.length === 0) continue;
    if (tops.length > 1 && tops.every((line) => /^agent: \{.*\}\s*(#.*)?$/.test(line))) blocks.push(...tops);
    else blocks.push(text);
  }
  return blocks;
}

function manifestWith(agentYaml: string): string {
  const agent = (parse(agentYaml) as { agent: unknown }).agent;
  const world = {
    name: 'docs',
    goal: { outcome: 'shows an agent block' },
    verify: { test: 'true' },
    agent,
    tasks: [{ id: 'a', title: 'a task', paths: ['src/a.js'] }],
  };
  return JSON.stringify(world);
}

describe('the agent blocks the README and docs/ show', () => {
  const found = pages().flatMap((page) => agentBlocks(readFileSync(page, 'utf8')).map((block) => ({ page: relative(ROOT, page), block })));

  it('are found (the presets, the openai agent, rotation, prompts)', () => {
    expect(found.length).toBeGreaterThanOrEqual(10);
  });

  it('are valid world.yaml as printed', () => {
    const invalid = found.flatMap(({ page, block }) => {
      try {
        readManifest(manifestWith(block));
        return [];
      } catch (error) {
        return [`${page}:\n${block}\n${(error as Error).message}`];
      }
    });
    expect(invalid).toEqual([]);
  });

  it('would catch a block with a field the schema does not know', () => {
    expect(() => readManifest(manifestWith('agent: { kind: command, preset: codex, modle: gpt-5 }'))).toThrow(/agent\.modle: unknown field/);
  });
});
