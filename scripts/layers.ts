/**
 * `npm run layers`: writes lint/biome-layers.json and CONTRIBUTING.md's layer table from
 * lint/layers.json, after checking the table (every folder of src/ a layer, no layer using a later one).
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { checkLayerTable, type LayerTable, renderLayerRules, replaceLayerTable } from './layers/render-layers.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const table = JSON.parse(readFileSync(`${root}lint/layers.json`, 'utf8')) as LayerTable;
const folders = readdirSync(`${root}src`, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);
const problems = checkLayerTable(table, folders);
if (problems.length > 0) {
  console.error(`lint/layers.json has problems:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  process.exit(1);
}
writeFileSync(`${root}lint/biome-layers.json`, renderLayerRules(table));
const contributing = readFileSync(`${root}CONTRIBUTING.md`, 'utf8');
writeFileSync(`${root}CONTRIBUTING.md`, replaceLayerTable(contributing, table));
console.log('wrote lint/biome-layers.json and the layer table of CONTRIBUTING.md');
