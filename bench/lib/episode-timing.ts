/**
 * One episode's time by phase, in milliseconds. The same shape for Genesis (read back from the
 * ledger) and for the naive loop (printed by naive-loop.sh), so the two sit side by side.
 * The phases are disjoint and add up to `total`; `other` is what the total holds beyond the named
 * phases (see OTHER_COVERS).
 */
export interface EpisodeTiming {
  /** Genesis: the episode's own bookkeeping before its workspace (its record, manifest, earlier attempts, done tasks, prompt); the naive loop has none. */
  prepare: number;
  workspace: number;
  agent: number;
  collect: number;
  gate: number;
  integrate: number;
  other: number;
  total: number;
  /** Of `gate`, the sandboxed test run itself (Genesis: the gate steps' own durations). */
  sandbox: number;
  /**
   * The whole call that ran the episode, by the clock of the process that made it, over its
   * episodes: what `total` leaves out. Genesis: runWorld from its call to its return (the run's
   * start, the episode, its final ledger write after its end, the run's end); the naive loop:
   * bash naive-loop.sh from its spawn to its exit.
   */
  wall: number;
}

export const PHASES = ['prepare', 'workspace', 'agent', 'collect', 'gate', 'sandbox', 'integrate', 'other', 'total', 'wall'] as const;

/** What each phase is called in tables: Genesis's name and what the naive loop does there. */
export const PHASE_LABELS: Record<(typeof PHASES)[number], string> = {
  prepare: 'prepare (record, manifest, prompt | -)',
  workspace: 'workspace (shared clone | git clone)',
  agent: 'agent start (no-op agent)',
  collect: 'collect (tree of the change | git commit)',
  gate: 'gate (checks, export, fresh sandbox)',
  sandbox: '  of which the sandboxed test run',
  integrate: 'integrate (own gate passed → landed | git push)',
  other: 'other (ledger, bookkeeping | rm -rf)',
  total: 'total per episode',
  wall: 'whole call per episode (a run of one | the script)',
};

export function column(timings: readonly EpisodeTiming[], phase: (typeof PHASES)[number]): number[] {
  return timings.map((t) => t[phase]);
}

/** What `other` holds, column by column (the bench prints it). */
export const OTHER_COVERS =
  "Genesis: the scheduler before the episode runs (lease, the episode opened in the ledger's journal, the job), the candidate commit and reservation after collect, the gated record held in the journal, and the run loop taking the result to the integration stage (the workspace's removal and the diff run while the gate runs; the episode's one git record is written when it lands, after its end); the naive loop: rm -rf of the clone";
