import type { TaskSpec, WorldManifest } from '../manifest/schema.js';

export interface GateStep {
  /** setup, build, test, or check:<task id> */
  name: string;
  command: string;
}

/**
 * The commands a candidate must pass, read from the accepted head's manifest: setup, build, the
 * world's test, the episode's own task check, and the check of every task already done (so
 * nothing that landed can be broken later). Checks of tasks not yet done are not run.
 */
export function planGate(manifest: WorldManifest, task: TaskSpec | null, doneTasks: ReadonlySet<string>): GateStep[] {
  const steps: GateStep[] = [];
  if (manifest.verify.setup.trim()) steps.push({ name: 'setup', command: manifest.verify.setup });
  if (manifest.verify.build.trim()) steps.push({ name: 'build', command: manifest.verify.build });
  steps.push({ name: 'test', command: manifest.verify.test });
  const seen = new Set([manifest.verify.test]);
  const checked = manifest.tasks.filter((t) => t.check && (t.id === task?.id || doneTasks.has(t.id)));
  for (const t of checked) {
    if (seen.has(t.check!)) continue;
    seen.add(t.check!);
    steps.push({ name: `check:${t.id}`, command: t.check! });
  }
  return steps;
}

/** The one-line summary carried by the Genesis-Verified trailer. */
export function summarizeGate(
  sandbox: string,
  steps: Array<{ name: string; exitCode: number; durationMs: number; tests: { passed: number; failed: number } | null }>,
): string {
  const parts = steps.map((s) => {
    const tests = s.tests ? ` ${s.tests.passed} passed ${s.tests.failed} failed` : '';
    return `${s.name} ${s.exitCode === 0 ? 'ok' : `exit ${s.exitCode}`}${tests}`;
  });
  const seconds = steps.reduce((sum, s) => sum + s.durationMs, 0) / 1000;
  return `${sandbox}: ${parts.join('; ')} (${seconds.toFixed(1)}s)`;
}
