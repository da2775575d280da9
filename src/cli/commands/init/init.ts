import type { Command } from 'commander';
import { printJson } from '../../output.js';
import { requireWorld, sandboxOption, worldOption } from '../../world-option.js';

interface InitOptions {
  world?: string;
  from: string;
  sandbox?: 'auto' | 'docker' | 'bwrap' | 'none';
  json?: boolean;
}

export function define(program: Command): void {
  program
    .command('init')
    .description("create a world: a bare git repository whose first accepted commit is --from's content, verified by the gate")
    .addOption(worldOption())
    .option('--from <dir>', 'directory with world.yaml and the starting files', '.')
    .addOption(sandboxOption())
    .option('--json', 'print the result as JSON')
    .action(async (opts: InitOptions) => {
      const { initWorld } = await import('../../../operations/init-world.js');
      const { createSandbox } = await import('../../../sandbox/create-sandbox.js');
      const { withCliName } = await import('../../invocation.js');
      const result = await initWorld({
        worldPath: requireWorld(opts),
        from: opts.from,
        sandbox: (m) => createSandbox(opts.sandbox ?? m.verify.sandbox, { image: m.verify.image }),
      });
      // `genesis run` uses the same sandbox unless world.yaml or its own --sandbox says otherwise.
      if (opts.sandbox) await import('../../../world/world-settings.js').then((m) => m.writeInitSandbox(result.world.path, opts.sandbox!));
      for (const warning of result.warnings) process.stderr.write(`warning: ${warning}\n`);
      const out = {
        world: result.world.path,
        name: result.manifest.name,
        branch: result.manifest.branch,
        commit: result.commit,
        tasks: result.manifest.tasks.length,
        verified: result.gate.record.summary,
      };
      if (opts.json) return printJson(out);
      process.stdout.write(
        withCliName(
          `created world "${out.name}" at ${out.world}\n  ${out.branch} @ ${out.commit.slice(0, 12)}  verified: ${out.verified}\n  ${out.tasks} tasks; next: genesis run --world ${out.world}${opts.sandbox ? ` (it gates with --sandbox ${opts.sandbox} too)` : ''}\n`,
        ),
      );
    });
}
