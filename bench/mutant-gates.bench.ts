/**
 * What `genesis calibrate` costs per mutant gate, against the project's own suite run on the host:
 * a JavaScript project (minimist at 1.2.8, tape, its runner installed through verify.deps from the
 * npm registry) and a Python one (the textwrap module of this machine's CPython with its own 66
 * tests, under pytest), each in bubblewrap and in docker. A sandbox wrapper times every command a
 * gate runs, so a mutant's gate splits into its suite run, the re-run of the tests it failed, the
 * dependency step and the gate's own work (tree export, canaries, pre-gate rules, reports); a
 * no-op command gives the sandbox's start alone.
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { formatTable } from '../src/cli/output.js';
import { localCalibrationGates, type CalibrationGates } from '../src/operations/calibrate/calibration-gate.js';
import { calibrateWorld } from '../src/operations/calibrate/calibrate-world.js';
import { createSandbox } from '../src/sandbox/create-sandbox.js';
import type { Sandbox, SandboxKind, SandboxRunSpec } from '../src/sandbox/sandbox.js';
import { LocalWorld } from '../src/world/local-world.js';
import type { BenchContext, BenchResult } from './lib/bench-module.js';
import { makeBenchRoot } from './lib/bench-world.js';
import { loadNow } from './lib/machine.js';
import { ms, summarize, timeRuns } from './lib/stats.js';

const execFileAsync = promisify(execFile);
const REPO = join(import.meta.dirname, '..');
const GENESIS = join(REPO, 'bin', 'genesis.js');
const ADOPT = join(REPO, 'test', 'fixtures', 'adopt');
const TAPE = 'tape@5.9.0';

interface Project {
  name: string;
  /** Makes the world at `world` and a checkout of its head at `host`, where the suite runs bare. */
  prepare(dir: string, world: string, host: string, sandbox: SandboxKind): Promise<void>;
  test: string;
}

const PROJECTS: Project[] = [
  {
    name: 'minimist 1.2.8 (tape)',
    test: "node node_modules/tape/bin/tape 'test/*.js'",
    async prepare(dir, world, host, sandbox) {
      const manifest = join(dir, `minimist-${sandbox}.yaml`);
      const text = await readFile(join(ADOPT, 'minimist.world.yaml'), 'utf8');
      await writeFile(manifest, text.replace('sandbox: auto', `sandbox: ${sandbox}`));
      await genesis(['init', '--world', world, '--adopt', join(ADOPT, 'minimist.bundle'), '--manifest', manifest]);
      await execFileAsync('git', ['clone', '--quiet', '--branch', 'main', join(ADOPT, 'minimist.bundle'), host]);
      await execFileAsync('npm', ['install', '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--ignore-scripts', TAPE], { cwd: host });
    },
  },
  {
    name: 'CPython textwrap (pytest)',
    test: 'python3 -B -m pytest -p no:cacheprovider -q tests',
    async prepare(_dir, world, host, sandbox) {
      const lib = (await execFileAsync('python3', ['-c', 'import sysconfig; print(sysconfig.get_path("stdlib"))'])).stdout.trim();
      await mkdir(join(host, 'tests'), { recursive: true });
      await copyFile(join(lib, 'textwrap.py'), join(host, 'textwrap.py'));
      await copyFile(join(lib, 'test', 'test_textwrap.py'), join(host, 'tests', 'test_textwrap.py'));
      const yaml = [
        'name: textwrap',
        'goal: { outcome: "textwrap wraps text as its tests say" }',
        `verify: { sandbox: ${sandbox}, image: "genesis/python:3", test: "${this.test}" }`,
        'protected: ["tests/**", "world.yaml"]',
        "agent: { kind: command, command: ['true'] }",
        '',
      ].join('\n');
      await writeFile(join(host, 'world.yaml'), yaml);
      await genesis(['init', '--world', world, '--from', host]);
    },
  },
];

export async function run(ctx: BenchContext): Promise<BenchResult> {
  const mutants = ctx.quick ? 3 : 10;
  const root = await makeBenchRoot('mutant-gates');
  const rows: Array<Array<string | number>> = [];
  const loads: number[] = [loadNow()];
  try {
    for (const project of PROJECTS) {
      for (const kind of ['bwrap', 'docker'] as const) {
        const dir = join(root.dir, `${project.name.split(' ')[0]}-${kind}`);
        const [world, host] = [join(dir, 'w.world'), join(dir, 'host')];
        await mkdir(dir, { recursive: true });
        await project.prepare(dir, world, host, kind);
        // The suite on the host, as its developers run it: no sandbox, no coverage, no gate.
        // A suite that fails here (no tests checked out, a runner missing) throws: its time would mean nothing.
        const suite = summarize(await timeRuns(5, () => execFileAsync('/bin/sh', ['-c', project.test], { cwd: host })));
        const timed = new TimedSandbox(await createSandbox(kind, { image: kind === 'docker' ? imageOf(project) : 'genesis/node:20' }));
        const start = summarize(await timeRuns(5, async () => timed.inner.run(await noop(join(dir, `noop-${timed.runs.length}-${Math.random()}`)))));
        const gates: Array<{ ms: number; runs: Run[] }> = [];
        const recording: CalibrationGates = (where) => {
          const gate = localCalibrationGates(where);
          return async (job) => {
            const t0 = performance.now();
            const before = timed.runs.length;
            const verdict = await gate(job);
            gates.push({ ms: performance.now() - t0, runs: timed.runs.slice(before) });
            return verdict;
          };
        };
        const report = await calibrateWorld({
          world: await LocalWorld.open(world),
          commits: 0,
          mutants,
          jobs: 1,
          sandbox: async () => timed,
          gates: recording,
        });
        loads.push(loadNow());
        const coverage = timed.runs.filter((r) => r.command.includes('GENESIS-EXECUTED-LINES'));
        const perGate = summarize(gates.map((g) => g.ms));
        const suiteRuns = summarize(gates.map((g) => sumOf(g.runs.filter((r) => r.command === project.test))));
        const suiteCount = gates.reduce((n, g) => n + g.runs.filter((r) => r.command === project.test).length, 0);
        const otherRuns = summarize(gates.map((g) => sumOf(g.runs.filter((r) => r.command !== project.test))));
        const other = summarize(gates.map((g) => g.ms - sumOf(g.runs)));
        const outsideGates = report.durationMs - sumOf(gates);
        rows.push([
          project.name,
          kind,
          ms(suite.median),
          ms(start.median),
          ms(sumOf(coverage)),
          ms(outsideGates),
          `${report.recall?.count ?? 0}/${report.recall?.of ?? 0}`,
          (suiteCount / Math.max(1, gates.length)).toFixed(1),
          ms(perGate.median),
          ms(suiteRuns.median),
          ms(otherRuns.median),
          ms(other.median),
          (perGate.median / suite.median).toFixed(1),
          (report.durationMs / Math.max(1, gates.length) / suite.median).toFixed(1),
        ]);
      }
    }
  } finally {
    await root.cleanup();
  }
  return {
    title: `Calibration's mutant gates against the suite's own time (${mutants} mutants, one gate at a time)`,
    table: formatTable(
      [
        'project',
        'sandbox',
        'suite on host',
        'sandbox start',
        'coverage run',
        'calibration outside gates',
        'caught',
        'suite runs per mutant',
        'per mutant gate',
        'its suite run',
        'its other runs',
        'its gate work',
        'gate / suite',
        'calibration per mutant / suite',
      ],
      rows,
    ),
    notes: [
      'Medians in ms. suite on host: the test command in a checkout of the head with its runner installed, no sandbox (5 runs). sandbox start: a no-op command in the sandbox (5 runs).',
      'coverage run: the head gate that ran the suite with coverage on (executed lines, and the head baseline every mutant is judged against). calibration outside gates: everything but the mutant gates (the coverage run included: sites, sampling, commits).',
      "suite runs per mutant: the test command's runs in the mutants' gates (the head's learned again, a failure run again), over the mutants. per mutant gate: one mutant's whole gate; its suite run: the sandbox time of its test step; its other runs: any other command it ran in the sandbox (a re-run of a failure that may be the machine's, the head's tests learned again, a dependency install); its gate work: the rest (tree export, canaries, dependency layout, pre-gate rules, reading reports).",
      'gate / suite: per mutant gate over suite on host. calibration per mutant / suite: the whole calibration over the mutants gated, over suite on host.',
      `load (1-minute average) when the run started and after each row: ${loads.join(', ')}`,
    ],
  };
}

interface Run {
  command: string;
  ms: number;
}

/** Times every command a gate runs in it, passing each on unchanged. */
class TimedSandbox implements Sandbox {
  readonly runs: Run[] = [];
  constructor(readonly inner: Sandbox) {}
  get kind() {
    return this.inner.kind;
  }
  get docker() {
    return this.inner.docker;
  }
  check() {
    return this.inner.check();
  }
  async run(spec: SandboxRunSpec) {
    const t0 = performance.now();
    const result = await this.inner.run(spec);
    this.runs.push({ command: spec.command, ms: performance.now() - t0 });
    return result;
  }
}

async function noop(workDir: string): Promise<SandboxRunSpec> {
  await mkdir(workDir, { recursive: true });
  return { command: 'true', workDir, timeoutMs: 60_000, limits: { cpus: 1, memoryMb: 512, pids: 128 } };
}

function imageOf(project: Project): string {
  return project.test.startsWith('python3') ? 'genesis/python:3' : 'genesis/node:20';
}

function sumOf(runs: ReadonlyArray<{ ms: number }>): number {
  return runs.reduce((sum, r) => sum + r.ms, 0);
}

async function genesis(args: string[]): Promise<void> {
  await execFileAsync(process.execPath, [GENESIS, ...args], { cwd: REPO });
}
