import { EXIT } from '../../exit-codes.js';
import type { DoctorCheck } from './checks.js';

const LABEL = { ok: 'ok  ', warn: 'warn', fail: 'FAIL' } as const;

/** One line per check, a "what to do" line under each problem, and a verdict at the end. */
export function formatDoctorReport(checks: readonly DoctorCheck[]): string {
  const width = Math.max(...checks.map((c) => c.name.length));
  const lines: string[] = [];
  for (const check of checks) {
    const [first = '', ...rest] = check.detail.split('\n');
    lines.push(`${LABEL[check.status]}  ${check.name.padEnd(width)}  ${first}`);
    const indent = ' '.repeat(width + 8);
    for (const line of rest) lines.push(`${indent}${line}`);
    if (check.status !== 'ok' && check.hint) lines.push(`${indent}what to do: ${check.hint}`);
  }
  const failed = checks.filter((c) => c.status === 'fail').length;
  const warned = checks.filter((c) => c.status === 'warn').length;
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  lines.push('');
  lines.push(
    failed > 0
      ? `${plural(failed, 'problem')} to fix${warned ? ` and ${plural(warned, 'warning')}` : ''}: Genesis cannot run here yet.`
      : warned > 0
        ? `${plural(warned, 'warning')}; nothing needed is missing.`
        : 'all checks passed.',
  );
  return lines.join('\n');
}

/** 1 when something needed is missing, else 0 (warnings do not fail). */
export function doctorExitCode(checks: readonly DoctorCheck[]): number {
  return checks.some((c) => c.status === 'fail') ? EXIT.error : EXIT.ok;
}
