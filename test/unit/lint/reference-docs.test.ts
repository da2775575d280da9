import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { renderReferences } from '../../../scripts/docs/references.js';
import { listUndescribedFields, renderWorldYamlPage } from '../../../scripts/docs/world-yaml-page.js';
import { GenesisError } from '../../../src/errors/genesis-error.js';
import { readManifest } from '../../../src/manifest/parse.js';
import { manifestSchema } from '../../../src/manifest/schema.js';

const ROOT = resolve(import.meta.dirname, '../../..');

describe('the generated references in docs/reference/', () => {
  it('are what `npm run docs` makes from the code today (run it after changing the schema, a command, a code or an exit code)', async () => {
    const pages = await renderReferences();
    expect(pages.map((p) => p.path).sort()).toEqual([
      'docs/reference/cli.md',
      'docs/reference/errors.md',
      'docs/reference/exit-codes.md',
      'docs/reference/http-api.md',
      'docs/reference/layers.md',
      'docs/reference/prices.md',
      'docs/reference/world-yaml.md',
    ]);
    for (const page of pages) {
      const onDisk = existsSync(join(ROOT, page.path)) ? readFileSync(join(ROOT, page.path), 'utf8') : '(missing)';
      expect(onDisk === page.text, `${page.path} is stale: run npm run docs`).toBe(true);
    }
  });

  it('have a description for every field of world.yaml', () => {
    expect(listUndescribedFields(manifestSchema)).toEqual([]);
  });

  it('name a field of a nested object, a list element or a union member that has no description', () => {
    const schema = z.object({
      a: z.string().describe('described'),
      b: z.object({ c: z.number().default(1) }).describe('described'),
      d: z.array(z.object({ e: z.boolean() })).describe('described'),
      f: z.union([z.string(), z.object({ g: z.string() })]).optional(),
    });
    expect(listUndescribedFields(schema)).toEqual(['b.c', 'd[].e', 'f', 'f.g']);
  });

  it('show each field with its type, default and description', () => {
    const page = renderWorldYamlPage(manifestSchema);
    expect(page).toContain('| `parallelism` | integer 1–64 | `2` | episodes running at once |');
    expect(page).toContain('| `verify.test` | string | **required** | test command every candidate must pass |');
    expect(page).toMatch(/\| `integration\.slots` \| integer 1–64 \| — \| speculative verifications/);
    expect(page).toMatch(/\| `tasks\[\]\.paths` \| list of string \| \*\*required\*\* \|/);
  });

  it('are linked from the error a broken world.yaml raises', () => {
    let caught: unknown;
    try {
      readManifest('name: w\nparallelism: many\n');
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(GenesisError);
    const hint = (caught as GenesisError).hint ?? '';
    const linked = hint.match(/docs\/reference\/[a-z-]+\.md/)?.[0];
    expect(linked).toBe('docs/reference/world-yaml.md');
    expect(existsSync(join(ROOT, linked!))).toBe(true);
  });
});
