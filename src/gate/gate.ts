import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Sandbox } from '../sandbox/sandbox.js';
import type { GateRecord, GateStepRecord } from '../world/episode-record.js';
import { exportTree } from '../world/export-tree.js';
import type { WorldManifest } from '../world/manifest-schema.js';
import type { GateStep } from './gate-plan.js';
import { summarizeGate } from './gate-plan.js';
import { failureSignature, parseTestOutput } from './test-report.js';

export type GateRunVerdict =
  | { ok: true; record: GateRecord; log: string }
  | { ok: false; reason: string; message: string; signature: string; record: GateRecord; log: string };

const LOG_PER_STEP = 64 * 1024;

/**
 * Runs a gate plan on a tree in a fresh sandbox directory: every step in order, sharing one work
 * dir, within one overall time budget; stops at the first failing step. A failure is a verdict,
 * not an exception.
 */
export async function runGate(opts: {
  repo: string;
  tree: string;
  steps: GateStep[];
  manifest: WorldManifest;
  sandbox: Sandbox;
  workDir: string;
}): Promise<GateRunVerdict> {
  const started = Date.now();
  const deadline = started + opts.manifest.verify.timeoutSec * 1000;
  const records: GateStepRecord[] = [];
  const logs: string[] = [];
  await rm(opts.workDir, { recursive: true, force: true });
  await exportTree(opts.repo, opts.tree, opts.workDir);
  try {
    for (const step of opts.steps) {
      const remaining = deadline - Date.now();
      const result = await opts.sandbox.run({
        command: step.command,
        workDir: opts.workDir,
        timeoutMs: Math.max(remaining, 1),
        limits: opts.manifest.verify.limits,
        image: opts.manifest.verify.image,
        maxOutputBytes: LOG_PER_STEP,
        env: { CI: 'true', GENESIS_GATE: '1' },
      });
      const report = parseTestOutput(result.output);
      records.push({
        name: step.name,
        command: step.command,
        exitCode: result.exitCode,
        timedOut: result.timedOut,
        oomKilled: result.oomKilled,
        durationMs: result.durationMs,
        tests: report ? { format: report.format, passed: report.passed, failed: report.failed, skipped: report.skipped } : null,
      });
      logs.push(`$ ${step.command}   [${step.name}]\n${result.output}${result.output.endsWith('\n') ? '' : '\n'}[exit ${result.exitCode}${result.timedOut ? ', timed out' : ''}${result.oomKilled ? ', out of memory' : ''} after ${(result.durationMs / 1000).toFixed(2)}s]\n`);
      if (result.exitCode !== 0) {
        const reason = result.timedOut ? 'gate-timeout' : result.oomKilled ? 'gate-oom' : `${step.name.split(':')[0]}-failed`;
        const failing = report?.failures.map((f) => f.name).slice(0, 5).join(', ');
        const message = result.timedOut
          ? `${step.name} ran out of the gate's ${opts.manifest.verify.timeoutSec}s`
          : `${step.name} failed (exit ${result.exitCode})${failing ? `: ${failing}` : ''}`;
        const record = gateRecord(opts.sandbox.kind, records, started, false);
        return { ok: false, reason, message, signature: failureSignature(`${reason}:${step.name}`, report, result.output), record, log: logs.join('\n') };
      }
    }
    return { ok: true, record: gateRecord(opts.sandbox.kind, records, started, true), log: logs.join('\n') };
  } finally {
    await rm(opts.workDir, { recursive: true, force: true }).catch(() => undefined);
  }
}

function gateRecord(sandbox: string, steps: GateStepRecord[], started: number, ok: boolean): GateRecord {
  return { ok, sandbox, summary: summarizeGate(sandbox, steps), steps, durationMs: Date.now() - started };
}

export function gateWorkDir(scratch: string, name: string): string {
  return join(scratch, 'gates', name);
}
