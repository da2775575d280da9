/**
 * One episode's time by phase, in milliseconds. The same shape for Genesis (read back from the
 * ledger) and for the naive loop (printed by naive-loop.sh), so the two sit side by side.
 * `other` is what the total holds beyond the named phases: for Genesis the ledger writes, the
 * prompt, the diff and the scheduler's own steps; for the naive loop removing the clone.
 */
export interface EpisodeTiming {
  workspace: number;
  agent: number;
  collect: number;
  gate: number;
  integrate: number;
  other: number;
  total: number;
  /** Of `gate`, the sandboxed test run itself (Genesis: the gate steps' own durations). */
  sandbox: number;
}

export const PHASES = ['workspace', 'agent', 'collect', 'gate', 'sandbox', 'integrate', 'other', 'total'] as const;

/** What each phase is called in tables: Genesis's name and what the naive loop does there. */
export const PHASE_LABELS: Record<(typeof PHASES)[number], string> = {
  workspace: 'workspace (shared clone | git clone)',
  agent: 'agent start (no-op agent)',
  collect: 'collect (tree of the change | git commit)',
  gate: 'gate (checks, export, fresh sandbox)',
  sandbox: '  of which the sandboxed test run',
  integrate: 'integrate (CAS fast-forward | git push)',
  other: 'other (ledger, bookkeeping | rm -rf)',
  total: 'total per episode',
};

export function column(timings: readonly EpisodeTiming[], phase: (typeof PHASES)[number]): number[] {
  return timings.map((t) => t[phase]);
}
