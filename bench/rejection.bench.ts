/**
 * What a rejection costs against an acceptance, gate against gate: a world whose suite is four
 * tests of 0.75 s in one `node --test` file, judged in Docker as a candidate's gate judges it
 * (a run again of what fails, the base asked about what failed twice). Three trees take turns run
 * by run: the accepted change, a change that breaks one test which passed on the base by its
 * record (the common rejection: no run on the base), and the same change with no record of the
 * base (the failing test runs there too). The ratio is rejected over accepted, medians of one run.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { stringify } from 'yaml';
import { formatTable } from '../src/cli/output.js';
import { runGate } from '../src/gate/gate.js';
import type { TestBaseline } from '../src/gate/test-baseline.js';
import { readManifest } from '../src/manifest/parse.js';
import { DockerSandbox } from '../src/sandbox/gate/docker/docker-sandbox.js';
import type { BenchContext, BenchResult } from './lib/bench-module.js';
import { IMAGE, makeBenchRoot, TEST_COMMAND } from './lib/bench-world.js';
import { loadNow } from './lib/machine.js';
import { cell, summarize } from './lib/stats.js';

const NAMES = ['parses', 'adds', 'formats', 'stores'];
const suite = (broken: string | null) =>
  `const { test } = require('node:test');\nconst wait = () => new Promise((r) => setTimeout(r, 750));\n${NAMES.map(
    (n) => `test(${JSON.stringify(n)}, async () => { await wait(); ${n === broken ? "throw new Error('broken');" : ''} });`,
  ).join('\n')}\n`;

export async function run(ctx: BenchContext): Promise<BenchResult> {
  const reps = ctx.quick ? 1 : 5;
  const root = await makeBenchRoot('rejection');
  const repo = join(root.dir, 'repo');
  await mkdir(repo, { recursive: true });
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, encoding: 'utf8' }).trim();
  git('init', '-q');
  const treeOf = async (content: string) => {
    await mkdir(dirname(join(repo, 'test/s.test.js')), { recursive: true });
    await writeFile(join(repo, 'test/s.test.js'), content);
    git('add', '--all');
    return git('write-tree');
  };
  const base = await treeOf(suite(null));
  const bad = await treeOf(suite('formats'));
  const manifest = readManifest(
    stringify({
      name: 'rejection',
      goal: { outcome: 'x' },
      verify: { sandbox: 'docker', image: IMAGE, test: TEST_COMMAND, timeoutSec: 120, limits: { cpus: 1, memoryMb: 512, pids: 128 } },
      agent: { kind: 'script', script: 'r.yaml' },
      tasks: [],
    }),
  );
  const record: TestBaseline = { [TEST_COMMAND]: [...NAMES].sort() };
  const sandbox = new DockerSandbox({ image: IMAGE });
  let next = 0;
  const gate = async (tree: string, baseRecord: TestBaseline | undefined) => {
    const t0 = performance.now();
    const verdict = await runGate({
      repo,
      tree,
      steps: [{ name: 'test', command: TEST_COMMAND }],
      manifest,
      sandbox,
      baseline: record,
      workDir: join(root.dir, `gate-${next++}`),
      flaky: { base, ownCheck: null, ...(baseRecord ? { baseRecord: async () => baseRecord } : {}) },
    });
    return { ms: performance.now() - t0, verdict };
  };
  const times = { accepted: [] as number[], known: [] as number[], unknown: [] as number[] };
  const loads: number[] = [];
  const runs = { accepted: '', known: '', unknown: '' };
  try {
    await sandbox.check();
    for (let i = 0; i < reps; i += 1) {
      loads.push(loadNow());
      for (const [kind, tree, baseRecord] of [
        ['accepted', base, record],
        ['known', bad, record],
        ['unknown', bad, undefined],
      ] as const) {
        const { ms, verdict } = await gate(tree, baseRecord);
        times[kind].push(ms);
        runs[kind] =
          `${verdict.ok ? 'passed' : verdict.reason}: ${verdict.record.steps.map((s) => `${s.name} ${(s.durationMs / 1000).toFixed(2)}s`).join(', ')}`;
      }
    }
  } finally {
    await root.cleanup();
  }
  const accepted = summarize(times.accepted).median;
  const ratio = (values: number[]) => (summarize(values).median / accepted).toFixed(2);
  return {
    title: `What a rejection costs: gate times, a suite of four tests of 0.75 s in Docker (${reps} runs each)`,
    table: formatTable(
      ['gate', 'time ms', 'rejected / accepted', 'steps (last run)'],
      [
        ['accepted change', cell(summarize(times.accepted)), '1.00', runs.accepted],
        ['rejected, failing test passed on the base by its record', cell(summarize(times.known)), ratio(times.known), runs.known],
        ['rejected, no record of the base', cell(summarize(times.unknown)), ratio(times.unknown), runs.unknown],
      ],
    ),
    notes: [
      `1-minute load ${loads.map((l) => l.toFixed(1)).join(', ')} during the runs`,
      'target: a rejected change at most 1.5× an accepted one (the first rejected row is the usual case: its base landed through a gate that stored its results)',
    ],
  };
}
