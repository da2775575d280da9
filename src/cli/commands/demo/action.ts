import { rm, stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { GenesisError } from '../../../errors/genesis-error.js';
import { createSandbox } from '../../../sandbox/create-sandbox.js';
import { initWorld } from '../../../operations/init-world.js';
import { STOP_EXIT } from '../../exit-codes.js';
import { withCliName } from '../../invocation.js';
import { formatSummary } from '../../run-reporter.js';
import { runWithSignals } from '../run/action.js';

/** src/cli/commands and dist/cli/commands both sit three levels below the package root. */
const CALC = fileURLToPath(new URL('../../../../worlds/calc', import.meta.url));

export async function runDemo(opts: { world: string; force?: boolean; sandbox?: 'auto' | 'docker' | 'bwrap' | 'none'; json?: boolean }): Promise<number> {
  if (await stat(opts.world).catch(() => null)) {
    if (!opts.force) throw new GenesisError('world-exists', `${opts.world} already exists`, { hint: 'pass --force to replace it, or --world <other path>' });
    await rm(opts.world, { recursive: true, force: true });
  }
  const say = (line: string) => !opts.json && process.stdout.write(`${line}\n`);
  say(`genesis demo: creating the world "calc" at ${opts.world} from ${CALC}`);
  const init = await initWorld({
    worldPath: opts.world,
    from: CALC,
    sandbox: (m) => createSandbox(opts.sandbox ?? m.verify.sandbox, { image: m.verify.image }),
  });
  say(`first commit ${init.commit.slice(0, 12)} verified (${init.gate.record.summary})\n`);
  const summary = await runWithSignals({ world: init.world.path, sandbox: opts.sandbox, json: Boolean(opts.json) });
  if (opts.json) {
    process.stdout.write(`${JSON.stringify({ type: 'summary', ...summary })}\n`);
  } else {
    say(`\n${formatSummary(summary)}\n`);
    say('Look at what happened:');
    // Printed as the user can type them: `genesis` once linked (npm link), else the path to this bin.
    say(withCliName(`  genesis log --world ${opts.world}          # the accepted history and its evidence`));
    say(withCliName(`  genesis episodes --world ${opts.world}     # every episode, rejected ones too`));
    say(withCliName(`  genesis show --world ${opts.world} HEAD    # the episode behind the last accepted commit: prompt, agent log, diff, gate log`));
    say(`  git --git-dir ${opts.world} log --format=%B -1 main   # the trailers on a commit`);
  }
  return STOP_EXIT[summary.stop.kind];
}
