/**
 * `npm run bench [-- --quick] [-- --only <name>[,<name>…]] [-- --row <text>]`: runs every bench/<name>.bench.ts in
 * name order, prints the machine and each module's table, and writes everything to
 * bench/results/<date>.json. Exits 1 when a module failed (the others still run).
 */
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { BenchContext, BenchResult, BenchRun } from './lib/bench-module.js';
import { describeMachine, formatMachine, loadNow } from './lib/machine.js';

const BENCH_DIR = fileURLToPath(new URL('.', import.meta.url));
const SUFFIX = '.bench.ts';

interface ModuleOutcome {
  name: string;
  durationMs: number;
  /** 1-minute load average when the module ended. */
  loadAfter: number;
  result?: BenchResult;
  error?: string;
}

const USAGE = `usage: npm run bench -- [--quick] [--only <name>[,<name>...]] [--row <text>]
  --quick         a smoke run: fewer episodes and repetitions (about a minute)
  --only <names>  run only these modules (file names without ${SUFFIX})
  --row <text>    only the rows whose label contains <text>, each with its per-change timeline (scaling)`;

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      only: { type: 'string', multiple: true },
      row: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const available = (await readdir(BENCH_DIR))
    .filter((f) => f.endsWith(SUFFIX))
    .map((f) => f.slice(0, -SUFFIX.length))
    .sort();
  const only = (values.only ?? [])
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter(Boolean);
  const unknown = only.filter((name) => !available.includes(name));
  if (unknown.length > 0) {
    process.stderr.write(`unknown benchmark ${unknown.join(', ')}; available: ${available.join(', ')}\n`);
    return 2;
  }
  const selected = only.length > 0 ? available.filter((name) => only.includes(name)) : available;
  const quick = values.quick ?? false;
  const ctx = { quick, ...(values.row ? { row: values.row } : {}) };

  const started = new Date();
  const machine = await describeMachine();
  process.stdout.write(`${formatMachine(machine)}\nmode:    ${quick ? 'quick' : 'full'}; modules: ${selected.join(', ')}\n`);

  const outcomes: ModuleOutcome[] = [];
  for (const name of selected) {
    const outcome = await runModule(name, ctx);
    outcomes.push(outcome);
    process.stdout.write(`\n${render(outcome)}\n`);
  }

  const durationMs = Date.now() - started.getTime();
  const file = join(BENCH_DIR, 'results', `${started.toISOString().slice(0, 19).replaceAll(':', '-')}.json`);
  await mkdir(join(BENCH_DIR, 'results'), { recursive: true });
  await writeFile(file, `${JSON.stringify({ startedAt: started.toISOString(), durationMs, quick, machine, modules: outcomes }, null, 2)}\n`);
  process.stdout.write(`\n${outcomes.length} module(s) in ${(durationMs / 1000).toFixed(1)} s; results in ${file}\n`);
  return outcomes.some((o) => o.error !== undefined) ? 1 : 0;
}

async function runModule(name: string, ctx: BenchContext): Promise<ModuleOutcome> {
  const t0 = performance.now();
  try {
    const mod = (await import(pathToFileURL(join(BENCH_DIR, `${name}${SUFFIX}`)).href)) as { run?: BenchRun };
    if (typeof mod.run !== 'function') throw new Error(`${name}${SUFFIX} exports no run(ctx) function`);
    const result = await mod.run(ctx);
    return { name, durationMs: Math.round(performance.now() - t0), loadAfter: loadNow(), result };
  } catch (error) {
    const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
    return { name, durationMs: Math.round(performance.now() - t0), loadAfter: loadNow(), error: text };
  }
}

function render(o: ModuleOutcome): string {
  const took = `(${o.name}: ${(o.durationMs / 1000).toFixed(1)} s, load ${o.loadAfter} at the end)`;
  if (!o.result) return `## ${o.name} FAILED ${took}\n${o.error ?? ''}`;
  const notes = (o.result.notes ?? []).map((n) => `- ${n}`);
  return [`## ${o.result.title} ${took}`, '', o.result.table, ...(notes.length > 0 ? ['', ...notes] : [])].join('\n');
}

process.exitCode = await main();
