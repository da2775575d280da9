import type { AuditFinding, AuditReport } from '../../../audit/index.js';
import { AUDIT_EXIT } from './exit.js';

/** The audit as text: what was checked, then one block per finding, then the verdict. */
export function renderAudit(report: AuditReport): string {
  const r = report.reverified;
  const sample = r.seed === null ? '' : ` (a sample, seed ${r.seed})`;
  const lines = [
    `audit of ${report.world}`,
    `  branch ${report.branch} @ ${report.head.slice(0, 12)}: ${report.commits} accepted commits; ledger: ${report.episodes} episodes${report.running ? `, ${report.running} running` : ''}`,
    `  verified again: ${r.commits} of ${r.of} commits${sample}${r.sandbox ? ` in ${r.sandbox}` : ''}${r.images?.length ? ` (image ${r.images.map((id) => id.slice(0, 19)).join(', ')})` : ''}`,
  ];
  if (report.adoption) {
    const a = report.adoption;
    lines.push(
      `  adopted at ${a.commit.slice(0, 12)}${a.source ? ` from ${a.source}` : ''}: ${a.historyCommits} commits of the repository's own history under it, not audited`,
    );
  }
  if (report.runHolder) lines.push(`  held by: ${report.runHolder} (episodes recorded as running are expected)`);
  if (report.findings.length > 0) lines.push('');
  for (const f of report.findings) lines.push(...renderFinding(f));
  lines.push('');
  lines.push(
    report.violations === 0
      ? `ok: no violations${report.warnings ? `, ${report.warnings} warning(s)` : ''} (${(report.durationMs / 1000).toFixed(1)}s)`
      : `FAILED: ${report.violations} violation(s), ${report.warnings} warning(s) (${(report.durationMs / 1000).toFixed(1)}s); exit code ${AUDIT_EXIT.violations}`,
  );
  return lines.join('\n');
}

function renderFinding(f: AuditFinding): string[] {
  const out = [`${f.severity === 'violation' ? 'VIOLATION' : 'warning'} [${f.code}] ${f.message}`];
  if (f.hint) out.push(`  what to do: ${f.hint}`);
  if (f.detail)
    out.push(
      ...f.detail
        .trimEnd()
        .split('\n')
        .slice(-15)
        .map((line) => `  | ${line}`),
    );
  return out;
}
