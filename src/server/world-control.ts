/**
 * What the API does to a world beyond reading it and writing retry markers: start and stop its
 * run, add a task. The server takes it as a port: `genesis serve` (src/cli/commands/serve/)
 * carries it out with a `genesis run` child process and the task-add operation, which the
 * server's layer may not reach itself.
 */
export interface WorldControl {
  /** Who runs the world now (in words), or null. */
  runHolder(): Promise<string | null>;
  /** Starts `genesis run` in the background; resolves once it holds the world. Throws `run-in-progress` when one does. */
  startRun(options: { pastEvidence: boolean }): Promise<{ pid: number; holder: string; log: string }>;
  /** Tells the run on this machine to stop as Ctrl-C does. Throws `no-run` when none holds the world. */
  stopRun(): Promise<{ pid: number; stopping: string }>;
  /** Adds a task to world.yaml on the accepted branch, through the gate; resolves with the new commit. */
  addTask(spec: Record<string, unknown>): Promise<string>;
}
