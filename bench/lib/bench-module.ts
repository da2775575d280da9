/**
 * The contract of a benchmark module: a file `bench/<name>.bench.ts` exporting `run`. `bench/run.ts`
 * finds every such file, runs them one at a time in name order (so they never compete for the
 * two cores), prints each table and stores it in bench/results/.
 *
 * - `quick` asks for a smoke run: fewer repetitions, same code paths, under ~10 s per module.
 * - `row` narrows a module with labelled rows (scaling) to those rows, in full mode, to read one closely.
 * - `table` is printed as is (build it with formatTable from src/cli/output.ts).
 * - `notes` are printed under the table: what a reader needs to read it right.
 * - A module cleans up what it created (temporary worlds, containers) even when it fails.
 */
export interface BenchContext {
  quick: boolean;
  /** Only the rows whose label contains this text, each with its per-change timeline; modules without labelled rows ignore it. */
  row?: string;
}

export interface BenchResult {
  title: string;
  table: string;
  notes?: string[];
}

export type BenchRun = (ctx: BenchContext) => Promise<BenchResult>;
