import type { FaultKind } from './faults.js';
import type { TrialResult } from './run-trial.js';

/** One row per trial, then the totals: what the script prints at the end. */
export function formatReport(results: readonly TrialResult[], kinds: readonly FaultKind[], seed: number, totalMs: number): string {
  const rows = results.map((r) => [
    String(r.trial),
    r.plan.kind,
    r.injected,
    r.fired ? 'yes' : 'NO',
    String(r.restarts),
    String(r.episodes),
    String(r.violations.length),
    `${(r.durationMs / 1000).toFixed(1)}s`,
  ]);
  const lines = [table(['trial', 'fault', 'injected', 'fired', 'restarts', 'episodes', 'violations', 'time'], rows), ''];
  for (const r of results) {
    if (!r.fired) lines.push(`trial ${r.trial} FAULT DID NOT FIRE: ${r.injected}`);
    for (const v of r.violations) lines.push(`trial ${r.trial} VIOLATION: ${v}`);
    for (const s of r.stops) lines.push(`trial ${r.trial} run stopped early: ${s}`);
    for (const w of r.warnings) lines.push(`trial ${r.trial} warning: ${w}`);
  }
  const byKind = kinds.map((k) => `${k} ${results.filter((r) => r.plan.kind === k).length}`).join(', ');
  const violations = results.reduce((n, r) => n + r.violations.length, 0);
  lines.push('', `seed ${seed}: ${results.length} trials; faults: ${byKind}`);
  lines.push(
    `violations: ${violations}; faults that did not fire: ${results.filter((r) => !r.fired).length}; unexpected early stops: ${results.reduce((n, r) => n + r.restarts, 0)}; time ${(totalMs / 1000).toFixed(0)}s`,
  );
  return lines.join('\n');
}

function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(headers), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}
