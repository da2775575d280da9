/**
 * Renders the layer table (lint/layers.json) into the two things that must agree with it: biome's
 * import rules (lint/biome-layers.json, which biome.jsonc extends) and docs/reference/layers.md.
 * Biome matches a restricted import by its specifier, and a relative specifier only names a folder
 * of src/ from a known depth, so the rules are made per depth: a file at src/<layer>/a/b.ts reaches
 * src/<other>/ as '../../../<other>/'. A subfolder that shares a layer's name (src/sandbox/gate/)
 * is then never mistaken for that layer.
 */

export interface Layer {
  folder: string;
  what: string;
  uses: string[];
}

/**
 * The steps of a folder whose subfolders import one way: each step may import the steps after it,
 * never one before it, nor the files of the folder itself (which wire the steps together).
 */
export interface Steps {
  /** The folder under src/, e.g. `schedule/run`. */
  folder: string;
  /** Its subfolders, the first importing all the others, the last none of them. */
  order: string[];
}

export interface LayerTable {
  layers: Layer[];
  steps?: Steps[];
  core: { folders: string[]; importNamePattern: string; message: string };
  packages: { name: string; only: string[]; instead: string }[];
}

/** How deep under its layer a file may sit and still get the rules (src/<layer>/ is depth 1); test/unit/lint/house-layout.test.ts fails past it. */
export const MAX_DEPTH = 5;

const SEE = '(docs/reference/layers.md; the table is lint/layers.json)';

/** Problems of the table itself: unknown names, a layer that uses a later one (a climb), a cycle. */
export function checkLayerTable(table: LayerTable, srcFolders: readonly string[]): string[] {
  const problems: string[] = [];
  const order = table.layers.map((layer) => layer.folder);
  table.layers.forEach((layer, index) => {
    for (const used of layer.uses) {
      const at = order.indexOf(used);
      if (at === -1) problems.push(`${layer.folder} uses ${used}, which is not a layer`);
      else if (at >= index) problems.push(`${layer.folder} uses ${used}, which comes after it: a lower layer never imports a higher one`);
    }
  });
  for (const folder of srcFolders) if (!order.includes(folder)) problems.push(`src/${folder} is not in the layer table`);
  for (const folder of order) if (!srcFolders.includes(folder)) problems.push(`layer ${folder} has no folder in src/`);
  for (const folder of table.core.folders) if (!order.includes(folder)) problems.push(`core folder ${folder} is not a layer`);
  for (const steps of table.steps ?? []) if (!order.includes(steps.folder.split('/')[0]!)) problems.push(`steps of ${steps.folder}: not in a layer`);
  return problems;
}

/** Problems of a steps entry against the subfolders its folder holds: each must be a step, each step a subfolder. */
export function checkSteps(steps: Steps, subfolders: readonly string[]): string[] {
  const problems: string[] = [];
  for (const folder of subfolders) if (!steps.order.includes(folder)) problems.push(`src/${steps.folder}/${folder} is not a step of ${steps.folder}`);
  for (const step of steps.order) if (!subfolders.includes(step)) problems.push(`step ${step} has no folder in src/${steps.folder}/`);
  return problems;
}

function packageIsAllowed(only: readonly string[], layer: string, file?: string): boolean {
  return only.includes(layer) || (file !== undefined && only.includes(file));
}

function restrictionsOf(table: LayerTable, layer: Layer, depth: number, file?: string): Record<string, unknown> {
  const up = '../'.repeat(depth);
  const forbidden = table.layers.map((l) => l.folder).filter((folder) => folder !== layer.folder && !layer.uses.includes(folder));
  const patterns: Record<string, unknown>[] = [];
  if (forbidden.length > 0) {
    const allowed = layer.uses.length > 0 ? `only ${layer.uses.join(', ')}` : 'nothing else of Genesis';
    patterns.push({ group: forbidden.map((folder) => `${up}${folder}/**`), message: `layers: ${layer.folder} imports ${allowed} ${SEE}` });
  }
  if (table.core.folders.includes(layer.folder)) {
    patterns.push({ group: ['**', './**', '../**'], importNamePattern: table.core.importNamePattern, message: `layers: ${table.core.message} ${SEE}` });
  }
  const paths: Record<string, string> = {};
  for (const pkg of table.packages) {
    if (!packageIsAllowed(pkg.only, layer.folder, file)) paths[pkg.name] = `layers: only ${pkg.only.join(', ')} import ${pkg.name}; ${pkg.instead} ${SEE}`;
  }
  const options: Record<string, unknown> = {};
  if (patterns.length > 0) options.patterns = patterns;
  if (Object.keys(paths).length > 0) options.paths = paths;
  return { linter: { rules: { style: { noRestrictedImports: { level: 'error', options } } } } };
}

/** Biome's configuration of the import rules: one override per layer and depth, then one per file exception. */
export function renderLayerRules(table: LayerTable): string {
  const overrides: Record<string, unknown>[] = [];
  for (const layer of table.layers) {
    for (let depth = 1; depth <= MAX_DEPTH; depth++) {
      overrides.push({ includes: [`src/${layer.folder}/${'*/'.repeat(depth - 1)}*`], ...restrictionsOf(table, layer, depth) });
    }
  }
  // A later override wins where two match: a step's rules repeat its layer's and add the order of the steps.
  for (const steps of table.steps ?? []) {
    const layer = table.layers.find((l) => l.folder === steps.folder.split('/')[0]);
    if (!layer) continue;
    // A step's files sit one folder below the steps' folder: src/schedule/run/loop/x.ts reaches src/ as '../../../'.
    const depth = steps.folder.split('/').length + 1;
    steps.order.forEach((step, index) => {
      const rules = restrictionsOf(table, layer, depth, undefined) as {
        linter: { rules: { style: { noRestrictedImports: { options: { patterns?: unknown[] } } } } };
      };
      const options = rules.linter.rules.style.noRestrictedImports.options;
      const later = steps.order.slice(index + 1);
      options.patterns = [
        ...(options.patterns ?? []),
        {
          group: ['../*', ...steps.order.slice(0, index).map((earlier) => `../${earlier}/**`)],
          message: `steps of ${steps.folder}: ${step}/ imports ${later.length > 0 ? `only ${later.map((l) => `${l}/`).join(', ')}` : 'no other step'}, never an earlier step nor the wiring in ${steps.folder}/ (${steps.order.join(' → ')}) ${SEE}`,
        },
      ];
      overrides.push({ includes: [`src/${steps.folder}/${step}/*`], ...rules });
    });
  }
  // A later override wins where two match, so each file allowed a package comes last.
  const exceptions = new Set(table.packages.flatMap((pkg) => pkg.only.filter((entry) => entry.includes('/'))));
  for (const file of exceptions) {
    const layer = table.layers.find((l) => l.folder === file.split('/')[0]);
    if (!layer) continue;
    overrides.push({ includes: [`src/${file}`], ...restrictionsOf(table, layer, file.split('/').length - 1, file) });
  }
  // JSON has no comments and biome refuses unknown keys: the schema line is the only header it takes.
  return `${JSON.stringify({ $schema: '../node_modules/@biomejs/biome/configuration_schema.json', overrides }, null, 2)}\n`;
}

/** docs/reference/layers.md: the layer table, lowest layer first, the steps of the run and the packages only adapters import. */
export function renderLayersPage(table: LayerTable): string {
  const rows = table.layers.map(
    (layer) => `| \`${layer.folder}/\` | ${layer.what} | ${layer.uses.length > 0 ? layer.uses.map((u) => `\`${u}/\``).join(', ') : 'nothing'} |`,
  );
  const packages = table.packages.map((pkg) => `- \`${pkg.name}\` only in ${pkg.only.map((o) => `\`src/${o}\``).join(', ')}: elsewhere, ${pkg.instead}.`);
  const steps = (table.steps ?? []).map(
    (s) =>
      `Within \`src/${s.folder}/\`, the steps import one way: ${s.order.map((step) => `\`${step}/\``).join(' → ')}; the files of \`src/${s.folder}/\` itself wire them.`,
  );
  return [
    '# Layers',
    '',
    'Generated by `npm run layers` from `lint/layers.json`, which also makes the import rules `npm run lint` enforces',
    '(`lint/biome-layers.json`). Each folder of `src/` is one layer; a layer imports only the layers it lists, each lower.',
    '',
    '| layer | what it holds | may import |',
    '|---|---|---|',
    ...rows,
    '',
    ...steps.flatMap((line) => [line, '']),
    `The core (${table.core.folders.map((f) => `\`${f}/\``).join(', ')}) may not import an adapter's constructor: ${table.core.message}.`,
    '',
    'Packages only adapters may import:',
    '',
    ...packages,
    '',
  ].join('\n');
}
