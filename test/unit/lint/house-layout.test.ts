import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkLayerTable, checkSteps, type LayerTable, MAX_DEPTH, renderLayerRules, renderLayersPage } from '../../../scripts/layers/render-layers.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const table = JSON.parse(readFileSync(join(ROOT, 'lint/layers.json'), 'utf8')) as LayerTable;

function foldersOf(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name);
}

/** Every folder under `dir` (itself included) with the names of the files directly in it. */
function walk(dir: string, out: Map<string, string[]> = new Map()): Map<string, string[]> {
  const entries = readdirSync(dir, { withFileTypes: true });
  out.set(
    dir,
    entries.filter((entry) => entry.isFile()).map((entry) => entry.name),
  );
  for (const entry of entries) if (entry.isDirectory()) walk(join(dir, entry.name), out);
  return out;
}

describe('the layer table', () => {
  it('names every folder of src/ and lets no layer use one above it', () => {
    expect(checkLayerTable(table, foldersOf(join(ROOT, 'src')))).toEqual([]);
  });

  it('catches a layer that uses a later one, and a folder the table misses', () => {
    const climbing: LayerTable = {
      ...table,
      layers: table.layers.map((layer) => (layer.folder === 'git' ? { ...layer, uses: [...layer.uses, 'ledger'] } : layer)),
    };
    expect(checkLayerTable(climbing, [...foldersOf(join(ROOT, 'src')), 'stray'])).toEqual([
      'git uses ledger, which comes after it: a lower layer never imports a higher one',
      'src/stray is not in the layer table',
    ]);
  });

  it('names every subfolder of a folder of steps as a step, and catches one it misses', () => {
    for (const steps of table.steps ?? []) expect(checkSteps(steps, foldersOf(join(ROOT, 'src', steps.folder)))).toEqual([]);
    const run = table.steps?.find((steps) => steps.folder === 'schedule/run');
    expect(run?.order).toEqual(['loop', 'wakes', 'decide', 'carry-out', 'ports']);
    expect(checkSteps(run!, [...foldersOf(join(ROOT, 'src/schedule/run')), 'stray'])).toEqual(['src/schedule/run/stray is not a step of schedule/run']);
  });

  it('is what lint/biome-layers.json and docs/reference/layers.md were made from (run `npm run layers` after editing it)', () => {
    expect(readFileSync(join(ROOT, 'lint/biome-layers.json'), 'utf8')).toBe(renderLayerRules(table));
    expect(readFileSync(join(ROOT, 'docs/reference/layers.md'), 'utf8')).toBe(renderLayersPage(table));
  });
});

describe('the folders of src/', () => {
  const folders = walk(join(ROOT, 'src'));

  it('sit no deeper under their layer than the generated import rules reach', () => {
    const tooDeep = [...folders]
      .filter(([dir, files]) => files.length > 0 && dir.slice(ROOT.length + 1).split('/').length - 1 > MAX_DEPTH)
      .map(([dir]) => dir.slice(ROOT.length + 1));
    expect(tooDeep).toEqual([]);
  });

  it('hold at most 15 files each', () => {
    const crowded = [...folders].filter(([, files]) => files.length > 15).map(([dir, files]) => `${dir.slice(ROOT.length + 1)}: ${files.length}`);
    expect(crowded).toEqual([]);
  });

  it('have no three files sharing the first word of their names (the folder is the prefix)', () => {
    const shared: string[] = [];
    for (const [dir, files] of folders) {
      const byWord = new Map<string, string[]>();
      for (const file of files) {
        const word = file.replace(/\.[^.]+$/, '').split('-')[0]!;
        byWord.set(word, [...(byWord.get(word) ?? []), file]);
      }
      for (const [word, names] of byWord) if (names.length >= 3) shared.push(`${dir.slice(ROOT.length + 1)}: ${word}- (${names.join(', ')})`);
    }
    expect(shared).toEqual([]);
  });

  it('are mirrored by the folders of test/unit and test/integration', () => {
    const sourceFolders = new Set(foldersOf(join(ROOT, 'src')));
    const strays = ['unit', 'integration'].flatMap((kind) =>
      foldersOf(join(ROOT, 'test', kind))
        .filter((folder) => !sourceFolders.has(folder) && !['lint', 'bench', 'deploy'].includes(folder))
        .map((folder) => `test/${kind}/${folder}`),
    );
    expect(strays).toEqual([]);
    expect(readdirSync(join(ROOT, 'test/unit')).filter((name) => name.endsWith('.ts'))).toEqual([]);
  });
});

/** Functions of src/world/ that take the repository's path: the adapters' plumbing behind WorldRepo's methods. */
function worldPathFunctions(files: Map<string, string>): Set<string> {
  const names = new Set<string>();
  for (const [file, text] of files) {
    if (!file.startsWith('src/world/')) continue;
    for (const m of text.matchAll(/export (?:async )?function (\w+)\(repo: string/g)) names.add(m[1]!);
  }
  return names;
}

/** Calls outside src/world/ that hand such a function a world's path instead of asking the WorldRepo. */
function worldPathCalls(files: Map<string, string>): string[] {
  const names = worldPathFunctions(files);
  const found: string[] = [];
  for (const [file, text] of files) {
    if (file.startsWith('src/world/')) continue;
    text.split('\n').forEach((line, i) => {
      for (const m of line.matchAll(/\b(\w+)\(\s*(?:\w+\.)*world\.path\b/g)) if (names.has(m[1]!)) found.push(`${file}:${i + 1}: ${m[1]}(…world.path…)`);
    });
  }
  return found;
}

function sourcesUnder(dir: string, out: Map<string, string> = new Map()): Map<string, string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) sourcesUnder(path, out);
    else if (entry.name.endsWith('.ts')) out.set(path.slice(ROOT.length + 1), readFileSync(path, 'utf8'));
  }
  return out;
}

describe('the WorldRepo port', () => {
  it("is how code outside src/world/ reads and writes the world's state: none of it passes world.path to a function of world/", () => {
    expect(worldPathCalls(sourcesUnder(join(ROOT, 'src')))).toEqual([]);
  });

  it('would name a call that does', () => {
    const files = new Map([
      ['src/world/review-decisions.ts', 'export async function readReviewDecisions(repo: string): Promise<void> {}'],
      ['src/operations/review-change.ts', 'const decisions = await readReviewDecisions(run.world.path);\nawait world.reviewDecisions();'],
    ]);
    expect(worldPathCalls(files)).toEqual(['src/operations/review-change.ts:1: readReviewDecisions(…world.path…)']);
  });
});
