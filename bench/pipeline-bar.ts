/**
 * The throughput bar: a holdout world of independent tasks, an agent that waits 2 s (as a remote
 * model does) and a gate of about 3 s, run with `genesis run` on the embedded defaults. Prints
 * the makespan against the ceiling ceil(tasks / P) × (agent + gate), the gates spent per accepted
 * change, and whether `genesis audit` passes afterwards.
 *
 *   node --import tsx bench/pipeline-bar.ts [--parallelism 6] [--tasks 11] [--agent-s 2] [--gate-s 3] [--sandbox docker|bwrap] [--checks] [--timeline] [--json]
 *
 * `--checks` gives every task a check of its own (`node --test checks/<task>.test.js`, one
 * passing test), which every later gate runs once the task is done, as the issue's world had.
 *
 * `--timeline` prints, per change, when its agent, own gate, verifications (and on what) ran and when it landed.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';
import { GitLedger } from '../src/ledger/git-ledger.js';
import { git } from '../src/git/git.js';
import { buildTimeline, formatTimeline, summarizeTimeline, type StampedEvent } from './pipeline-timeline.js';

const BIN = fileURLToPath(new URL('../bin/genesis.js', import.meta.url));

/** Runs the CLI; each whole line of its output is stamped with when it arrived (the run's events). */
function genesis(args: string[]): Promise<{ code: number; stdout: string; ms: number; lines: Array<{ at: number; line: string }> }> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    let partial = '';
    const lines: Array<{ at: number; line: string }> = [];
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
      const parts = (partial + c.toString()).split('\n');
      partial = parts.pop()!;
      for (const line of parts) lines.push({ at: performance.now() - t0, line });
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, ms: performance.now() - t0, lines }));
  });
}

export async function measureBar(opts: {
  parallelism: number;
  tasks: number;
  agentS: number;
  gateS: number;
  slots?: number;
  sandbox?: string;
  checks?: boolean;
  timeline?: boolean;
}) {
  const root = await mkdtemp(join(tmpdir(), 'genesis-bar-'));
  try {
    const seed = join(root, 'seed');
    await mkdir(join(seed, 'notes'), { recursive: true });
    await mkdir(join(seed, 'test'), { recursive: true });
    await mkdir(join(root, 'holdout'), { recursive: true });
    await writeFile(join(seed, 'notes', '.keep'), '');
    await writeFile(join(seed, 'test', 'smoke.test.js'), "const test = require('node:test');\ntest('ok', () => {});\n");
    if (opts.checks) {
      await mkdir(join(seed, 'checks'));
      for (let i = 1; i <= opts.tasks; i++)
        await writeFile(join(seed, 'checks', `t${i}.test.js`), `const test = require('node:test');\ntest('t${i} checked', () => {});\n`);
    }
    await writeFile(join(root, 'holdout', 'hidden.test.js'), "const test = require('node:test');\ntest('hidden', () => {});\n");
    // The gate: the visible tests after a wait, then the hidden ones; about gateS seconds in all.
    const wait = Math.max(0, opts.gateS - 0.8).toFixed(2);
    await writeFile(
      join(seed, 'world.yaml'),
      stringify({
        name: 'bar',
        goal: { outcome: 'every note written' },
        verify: {
          test: `sleep ${wait} && node --test test/`,
          timeoutSec: 120,
          holdout: { dir: join(root, 'holdout'), command: 'node --test .genesis-holdout/' },
        },
        protected: ['test/**', 'checks/**', 'world.yaml'],
        agent: { kind: 'command', command: ['sh', '-c', `sleep ${opts.agentS}; echo "$GENESIS_EPISODE_ID" > "notes/$GENESIS_TASK_ID.txt"`], timeoutSec: 120 },
        retry: { maxAttempts: 1 },
        parallelism: opts.parallelism,
        ...(opts.slots ? { integration: { slots: opts.slots } } : {}),
        tasks: Array.from({ length: opts.tasks }, (_, i) => ({
          id: `t${i + 1}`,
          title: `note ${i + 1}`,
          paths: [`notes/t${i + 1}.txt`],
          ...(opts.checks ? { check: `node --test checks/t${i + 1}.test.js` } : {}),
        })),
      }),
    );
    const world = join(root, 'bar.world');
    const init = await genesis(['init', '--world', world, '--from', seed, '--json']);
    if (init.code !== 0) throw new Error(`genesis init failed (${init.code})`);
    const run = await genesis(['run', '--world', world, '--json', ...(opts.sandbox ? ['--sandbox', opts.sandbox] : [])]);
    const summary = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as { accepted: number; stop: { kind: string }; durationMs: number };
    const audit = await genesis(['audit', '--world', world, '--sample', '0', '--json']);
    const records = await new GitLedger(world).readAll();
    const verifications = (await git(['for-each-ref', '--format=%(refname)', 'refs/genesis/verifications/'], { cwd: world })).stdout
      .split('\n')
      .filter(Boolean).length;
    const gates = records.filter((r) => r.gate !== null || r.phases.gate !== undefined).length + verifications;
    const gateMs = records.map((r) => r.phases.gate ?? 0).filter((ms) => ms > 0);
    const timeline = buildTimeline(stampedEvents(run.lines));
    if (opts.timeline) process.stderr.write(`${formatTimeline(timeline)}\n`);
    const ceilingS = Math.ceil(opts.tasks / opts.parallelism) * (opts.agentS + opts.gateS);
    const makespanS = summary.durationMs / 1000;
    return {
      parallelism: opts.parallelism,
      tasks: opts.tasks,
      accepted: summary.accepted,
      stop: summary.stop.kind,
      makespanS: Math.round(makespanS * 10) / 10,
      ceilingS,
      efficiency: Math.round((ceilingS / makespanS) * 100) / 100,
      gatesPerChange: summary.accepted ? Math.round((gates / summary.accepted) * 100) / 100 : null,
      secondGates: verifications,
      gatedOnTip: records.filter((r) => r.gatedOn).length,
      medianOwnGateS: gateMs.length ? Math.round(gateMs.sort((a, b) => a - b)[Math.floor(gateMs.length / 2)]! / 100) / 10 : null,
      auditExit: audit.code,
      // Why any episode did not land (a run that stops "blocked" says which task and why here).
      notLanded: records
        .filter((r) => r.outcome !== 'accepted')
        .map((r) => `${r.task}: ${r.outcome ?? r.status} ${r.reason ?? ''} ${(r.message ?? '').slice(0, 160)}`.trim()),
      breakdown: summarizeTimeline(timeline, summary.durationMs),
    };
  } finally {
    if (process.env.GENESIS_BAR_KEEP) process.stderr.write(`kept ${root}\n`);
    else await rm(root, { recursive: true, force: true });
  }
}

/** The run's JSON events, stamped relative to its first event (the run's start). */
function stampedEvents(lines: ReadonlyArray<{ at: number; line: string }>): StampedEvent[] {
  const events = lines.flatMap(({ at, line }) => {
    try {
      const event = JSON.parse(line) as StampedEvent['event'];
      return typeof event?.type === 'string' ? [{ at, event }] : [];
    } catch {
      return [];
    }
  });
  const t0 = events.find((e) => e.event.type === 'start')?.at ?? 0;
  return events.map((e) => ({ at: Math.round(e.at - t0), event: e.event }));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      parallelism: { type: 'string', default: '6' },
      tasks: { type: 'string', default: '11' },
      'agent-s': { type: 'string', default: '2' },
      'gate-s': { type: 'string', default: '3' },
      slots: { type: 'string' },
      sandbox: { type: 'string' },
      checks: { type: 'boolean', default: false },
      timeline: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
    },
  });
  const result = await measureBar({
    parallelism: Number(values.parallelism),
    tasks: Number(values.tasks),
    agentS: Number(values['agent-s']),
    gateS: Number(values['gate-s']),
    slots: values.slots ? Number(values.slots) : undefined,
    sandbox: values.sandbox,
    checks: values.checks,
    timeline: values.timeline,
  });
  process.stdout.write(
    values.json
      ? `${JSON.stringify(result)}\n`
      : `${Object.entries(result)
          .map(([k, v]) => `${k}: ${typeof v === 'object' ? JSON.stringify(v) : v}`)
          .join('\n')}\n`,
  );
}
