import { createSandbox } from '../../sandbox/create-sandbox.js';
import { NONE_SANDBOX_WARNING } from '../../sandbox/none-sandbox.js';
import type { RunSummary } from '../../schedule/run-events.js';
import { runWorld } from '../../schedule/run-world.js';
import { WorldRepo } from '../../world/world-repo.js';
import { formatRunEvent, formatSummary } from '../run-reporter.js';
import { STOP_EXIT } from '../exit-codes.js';

/** Runs a world with signals wired: the first Ctrl-C stops cleanly, a second one exits at once. */
export async function runCommand(opts: { world: string; sandbox?: 'auto' | 'docker' | 'bwrap' | 'none'; json: boolean }): Promise<number> {
  const summary = await runWithSignals(opts);
  if (opts.json) process.stdout.write(`${JSON.stringify({ type: 'summary', ...summary })}\n`);
  else process.stdout.write(`${formatSummary(summary)}\n`);
  return STOP_EXIT[summary.stop.kind];
}

export async function runWithSignals(opts: { world: string; sandbox?: 'auto' | 'docker' | 'bwrap' | 'none'; json: boolean }): Promise<RunSummary> {
  const world = await WorldRepo.open(opts.world);
  const controller = new AbortController();
  const onSignal = () => {
    if (controller.signal.aborted) process.exit(130);
    process.stderr.write('\nstopping: running episodes are being stopped and recorded (press Ctrl-C again to quit at once)\n');
    controller.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    let sandbox;
    if (opts.sandbox) {
      const manifest = await world.manifestAt('HEAD');
      sandbox = await createSandbox(opts.sandbox, { image: manifest.verify.image });
    }
    if (sandbox?.kind === 'none') process.stderr.write(`warning: ${NONE_SANDBOX_WARNING}\n`);
    return await runWorld({
      world,
      sandbox,
      signal: controller.signal,
      onEvent: (event) => {
        if (opts.json) return process.stdout.write(`${JSON.stringify(event)}\n`);
        const line = formatRunEvent(event);
        if (line) process.stdout.write(`${line}\n`);
      },
    });
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
