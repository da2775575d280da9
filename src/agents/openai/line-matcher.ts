import { Worker } from 'node:worker_threads';
import { ToolError } from './workspace-paths.js';

/**
 * The thread that runs the model's regular expression, line by line over each text it is sent,
 * answering with the indices of the lines that match (at most `max` a text). Written out as a
 * source string so that it runs the same from the compiled package and from the program bundled
 * into one file, where no module of its own could be found by path.
 */
const MATCHER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const regex = new RegExp(workerData.pattern);
parentPort.on('message', (text) => {
  const lines = text.split('\\n');
  const hits = [];
  for (let i = 0; i < lines.length && hits.length < workerData.max; i++) if (regex.test(lines[i])) hits.push(i);
  parentPort.postMessage(hits);
});
`;

/**
 * The model's regular expression, run off the program's event loop under one deadline for a
 * whole search. V8's engine backtracks: a pattern such as `^(a+)+$` over a line of 50 `a`s and a
 * `!` takes longer than any episode, and nothing returns from `RegExp.test` until it is done. On a
 * thread of its own it can be stopped (`terminate` interrupts it), so such a search ends as a tool
 * error the model reads, and the conversation goes on.
 */
export class LineMatcher {
  private readonly worker: Worker;
  private readonly expired: Promise<never>;
  private timer: NodeJS.Timeout | undefined;

  /** Compiles `pattern` here first (compiling is linear), so a wrong pattern is an error at once. */
  constructor(pattern: string, max: number, deadlineMs: number) {
    try {
      new RegExp(pattern);
    } catch (error) {
      throw new ToolError(`pattern is not a valid regular expression: ${(error as Error).message}`);
    }
    this.worker = new Worker(MATCHER_SOURCE, { eval: true, workerData: { pattern, max } });
    this.expired = new Promise<never>((_, reject) => {
      this.timer = setTimeout(() => {
        void this.worker.terminate();
        reject(
          new ToolError(
            `the search took longer than ${deadlineMs / 1000} s and was stopped: the pattern may backtrack without end (nested quantifiers such as (a+)+); simplify it or narrow the path`,
          ),
        );
      }, deadlineMs);
    });
    this.expired.catch(() => undefined);
  }

  /** The indices of the lines of `text` that match, or the deadline's error. */
  match(text: string): Promise<number[]> {
    const answer = new Promise<number[]>((resolve, reject) => {
      const onMessage = (hits: number[]) => {
        this.worker.off('error', onError);
        resolve(hits);
      };
      const onError = (error: Error) => {
        this.worker.off('message', onMessage);
        reject(new ToolError(`the search failed: ${error.message}`));
      };
      this.worker.once('message', onMessage);
      this.worker.once('error', onError);
    });
    this.worker.postMessage(text);
    return Promise.race([answer, this.expired]);
  }

  async close(): Promise<void> {
    clearTimeout(this.timer);
    await this.worker.terminate();
  }
}
