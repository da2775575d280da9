import type { Command } from 'commander';
import { printJson } from '../../output.js';
import { requireWorld, sandboxOption, worldOption } from '../../world-option.js';

interface InitOptions {
  world?: string;
  from: string;
  adopt?: string;
  branch?: string;
  manifest?: string;
  sandbox?: 'auto' | 'docker' | 'bwrap' | 'none';
  json?: boolean;
}

export function define(program: Command): void {
  program
    .command('init')
    .description(
      "create a world: a bare git repository whose first accepted commit is --from's content (history dropped), or with --adopt a repository's head, its history kept; verified by the gate",
    )
    .addOption(worldOption())
    .option('--from <dir>', 'directory with world.yaml and the starting files', '.')
    .option('--adopt <repo>', "continue this repository's history (a path, a git bundle or a git URL): its head, verified, becomes the first accepted commit")
    .option('--branch <name>', 'with --adopt: the branch of the repository to continue (default: the one its HEAD names)')
    .option(
      '--manifest <file>',
      "with --adopt: the world.yaml to add when the repository has none (added in a commit of its own; else one is guessed from package.json's test script)",
    )
    .addOption(sandboxOption())
    .option('--json', 'print the result as JSON')
    .action(async (opts: InitOptions) => {
      const { createSandbox } = await import('../../../sandbox/create-sandbox.js');
      const { withCliName } = await import('../../invocation.js');
      if (opts.adopt) return adopt(opts, opts.adopt);
      const { initWorld } = await import('../../../operations/init-world.js');
      await refuseMissingAgent(opts.from);
      const { tellWaits } = await import('../../wait-board.js');
      const waits = tellWaits('genesis init', (line) => process.stderr.write(`${line}\n`));
      const result = await initWorld({
        worldPath: requireWorld(opts),
        from: opts.from,
        sandbox: (m) => createSandbox(opts.sandbox ?? m.verify.sandbox, { image: m.verify.image }),
        onWait: waits.onWait,
      }).finally(waits.stop);
      // `genesis run` uses the same sandbox unless world.yaml or its own --sandbox says otherwise.
      if (opts.sandbox) await result.world.writeInitSandbox(opts.sandbox);
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

async function adopt(opts: InitOptions, source: string): Promise<void> {
  const { adoptWorld } = await import('../../../operations/adopt/adopt-world.js');
  const { createSandbox } = await import('../../../sandbox/create-sandbox.js');
  const { withCliName } = await import('../../invocation.js');
  const { tellWaits } = await import('../../wait-board.js');
  const waits = tellWaits('genesis init', (line) => process.stderr.write(`${line}\n`));
  const result = await adoptWorld({
    worldPath: requireWorld(opts),
    source,
    branch: opts.branch,
    manifestFile: opts.manifest,
    sandbox: (m) => createSandbox(opts.sandbox ?? m.verify.sandbox, { image: m.verify.image }),
    onWait: waits.onWait,
  }).finally(waits.stop);
  if (opts.sandbox) await result.world.writeInitSandbox(opts.sandbox);
  for (const warning of result.warnings) process.stderr.write(`warning: ${warning}\n`);
  const out = {
    world: result.world.path,
    name: result.manifest.name,
    branch: result.manifest.branch,
    sourceBranch: result.sourceBranch,
    adopted: result.adopted,
    commit: result.commit,
    manifestAdded: result.manifestAdded,
    historyCommits: result.historyCommits,
    tasks: result.manifest.tasks.length,
    verified: result.gate.record.summary,
  };
  if (opts.json) return printJson(out);
  process.stdout.write(
    withCliName(
      `adopted ${source} (${out.sourceBranch} @ ${out.adopted.slice(0, 12)}, ${out.historyCommits} commits of history) as world "${out.name}" at ${out.world}\n  ${out.branch} @ ${out.commit.slice(0, 12)}${out.manifestAdded ? ' (world.yaml added)' : ''}  verified: ${out.verified}\n  next: genesis calibrate --world ${out.world} --commits 20 --mutants 20 (how fairly the gate judges this project), then genesis run --world ${out.world}\n`,
    ),
  );
}

/**
 * The agent's program must exist before a world is made for it, and a preset must be one the model
 * gateway can stand in front of: otherwise init succeeds and the run stops at once
 * (agent-not-found, agent-endpoint-unknown). Found as genesis doctor --world finds it.
 * A world.yaml that does not parse is left for init to report with its paths.
 */
async function refuseMissingAgent(from: string): Promise<void> {
  const { readFile, stat } = await import('node:fs/promises');
  const { join } = await import('node:path');
  const { readManifest } = await import('../../../manifest/parse.js');
  const { GenesisError } = await import('../../../errors/genesis-error.js');
  const { checkAgentBinary } = await import('../doctor/agent.js');
  const text = await readFile(join(from, 'world.yaml'), 'utf8').catch(() => null);
  if (text === null) return;
  let manifest: ReturnType<typeof readManifest>;
  try {
    manifest = readManifest(text, join(from, 'world.yaml'));
  } catch {
    return;
  }
  const { checkPresetUpstreams } = await import('../../../agents/command/preset-upstream.js');
  checkPresetUpstreams(manifest);
  const check = await checkAgentBinary(async (path) => (await stat(join(from, path)).catch(() => null))?.isFile() ?? false, manifest);
  if (check?.status === 'fail')
    throw new GenesisError('agent-not-found', check.detail.replace(/; genesis run would stop.*$/, ''), { hint: check.hint ?? undefined });
}
