/**
 * `npm run layers`: writes lint/biome-layers.json and docs/reference/layers.md from
 * lint/layers.json, after checking the table (every folder of src/ a layer, no layer using a later one).
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { checkLayerTable, checkSteps, type LayerTable, renderLayerRules, renderLayersPage } from './layers/render-layers.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const table = JSON.parse(readFileSync(`${root}lint/layers.json`, 'utf8')) as LayerTable;
const subfoldersOf = (dir: string) =>
  readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name);
const problems = [
  ...checkLayerTable(table, subfoldersOf(`${root}src`)),
  ...(table.steps ?? []).flatMap((steps) => checkSteps(steps, subfoldersOf(`${root}src/${steps.folder}`))),
];
if (problems.length > 0) {
  console.error(`lint/layers.json has problems:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  process.exit(1);
}
writeFileSync(`${root}lint/biome-layers.json`, renderLayerRules(table));
writeFileSync(`${root}docs/reference/layers.md`, renderLayersPage(table));
console.log('wrote lint/biome-layers.json and docs/reference/layers.md');
