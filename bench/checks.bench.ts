/**
 * What the checks of done tasks add to a gate: a world whose suite is one tiny `node --test` test
 * and ten done tasks, each with a check of its own (`node --test checks/<task>.test.js`, one test),
 * gated in Docker as a candidate's gate is. Two plans take turns run by run: every check a step of
 * its own (a sandbox run, a tree copy and a `node --test` each, as gates ran them before checks
 * ran together), and the plan planGate makes now (the ten as one `node --test` over their files).
 * Both run the same tests, each file in a node process of its own with the gate's canaries.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { stringify } from 'yaml';
import { formatTable } from '../src/cli/output.js';
import { runGate } from '../src/gate/gate.js';
import { planGate, type GateStep } from '../src/gate/plan.js';
import { readManifest } from '../src/manifest/parse.js';
import { DockerSandbox } from '../src/sandbox/gate/docker/docker-sandbox.js';
import type { BenchContext, BenchResult } from './lib/bench-module.js';
import { IMAGE, makeBenchRoot, TEST_COMMAND } from './lib/bench-world.js';
import { loadNow } from './lib/machine.js';
import { cell, summarize } from './lib/stats.js';

const CHECKS = 10;

export async function run(ctx: BenchContext): Promise<BenchResult> {
  const reps = ctx.quick ? 1 : 5;
  const root = await makeBenchRoot('checks');
  const repo = join(root.dir, 'repo');
  await mkdir(repo, { recursive: true });
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, encoding: 'utf8' }).trim();
  git('init', '-q');
  const ids = Array.from({ length: CHECKS }, (_, i) => `t${i + 1}`);
  const files: Record<string, string> = {
    'test/smoke.test.js': "const { test } = require('node:test');\ntest('ok', () => {});\n",
    ...Object.fromEntries(ids.map((id) => [`checks/${id}.test.js`, `const { test } = require('node:test');\ntest('${id} checked', () => {});\n`])),
  };
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(repo, path)), { recursive: true });
    await writeFile(join(repo, path), content);
  }
  git('add', '--all');
  const tree = git('write-tree');
  const manifest = readManifest(
    stringify({
      name: 'checks',
      goal: { outcome: 'x' },
      verify: { sandbox: 'docker', image: IMAGE, test: TEST_COMMAND, timeoutSec: 120, limits: { cpus: 1, memoryMb: 512, pids: 128 } },
      agent: { kind: 'script', script: 'r.yaml' },
      tasks: ids.map((id) => ({ id, title: id, paths: [`src/${id}.js`], check: `node --test checks/${id}.test.js` })),
    }),
  );
  const together = planGate(manifest, null, new Set(ids));
  const alone: GateStep[] = [
    { name: 'test', command: TEST_COMMAND },
    ...ids.map((id) => ({ name: `check:${id}`, command: `node --test checks/${id}.test.js` })),
  ];
  const sandbox = new DockerSandbox({ image: IMAGE });
  let next = 0;
  const plans = { alone, together } as const;
  const times = { alone: [] as number[], together: [] as number[] };
  const stepMs = { alone: [] as number[], together: [] as number[] };
  const runs = { alone: '', together: '' };
  const loads: number[] = [];
  try {
    await sandbox.check();
    for (let i = 0; i < reps; i += 1) {
      loads.push(loadNow());
      for (const kind of ['alone', 'together'] as const) {
        const t0 = performance.now();
        const verdict = await runGate({ repo, tree, steps: plans[kind], manifest, sandbox, workDir: join(root.dir, `gate-${next++}`) });
        times[kind].push(performance.now() - t0);
        if (!verdict.ok) throw new Error(`the ${kind} plan failed: ${verdict.message}`);
        const checks = verdict.record.steps.filter((s) => s.name.startsWith('check:'));
        stepMs[kind].push(checks.reduce((sum, s) => sum + s.durationMs, 0));
        const tests = checks.reduce((sum, s) => sum + (s.tests?.passed ?? 0), 0);
        runs[kind] = `${checks.length} check step${checks.length === 1 ? '' : 's'}, ${tests} check tests passed`;
      }
    }
  } finally {
    await root.cleanup();
  }
  const ratio = (summarize(times.together).median / summarize(times.alone).median).toFixed(2);
  return {
    title: `What the checks of ${CHECKS} done tasks add to a gate, in Docker (${reps} runs each)`,
    table: formatTable(
      ['plan', 'whole gate ms', 'check steps ms (sandbox time)', 'steps (last run)'],
      [
        ['each check a step of its own', cell(summarize(times.alone)), cell(summarize(stepMs.alone)), runs.alone],
        ['checks of one runner run together (planGate)', cell(summarize(times.together)), cell(summarize(stepMs.together)), runs.together],
      ],
    ),
    notes: [`1-minute load ${loads.map((l) => l.toFixed(1)).join(', ')} during the runs`, `together / alone, whole gate at the median: ${ratio}`],
  };
}
