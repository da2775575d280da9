import type { Sandbox, SandboxRunResult } from './sandbox.js';

/**
 * Wraps a sandbox so that everything run through it stops when `signal` is aborted: the command
 * running then is killed as at its timeout (`stopped` on its result), and every run asked for
 * after that ends at once without starting, as a killed one would. For a gate whose verdict is no
 * longer wanted (it judges a speculative tip that will not land): whatever it goes on to ask for
 * (a run again, a step after) costs nothing.
 */
export function stoppableSandbox(inner: Sandbox, signal: AbortSignal): Sandbox {
  return {
    kind: inner.kind,
    ...(inner.docker ? { docker: inner.docker } : {}),
    check: () => inner.check(),
    run: async (spec) => {
      if (signal.aborted) return notStarted();
      const both = spec.signal ? AbortSignal.any([spec.signal, signal]) : signal;
      return inner.run({ ...spec, signal: both });
    },
  };
}

function notStarted(): SandboxRunResult {
  const output = 'stopped before it started: the gate is no longer wanted\n';
  return { exitCode: 137, timedOut: false, oomKilled: false, output, outputBytes: output.length, truncated: false, durationMs: 0, stopped: true };
}
