import { Option, type Command } from 'commander';
import { requireWorld, sandboxOption, worldOption } from '../../world-option.js';

interface ListOptions {
  json: boolean;
}
interface PrepareOptions {
  world?: string;
  commit?: string;
  sandbox?: 'auto' | 'docker' | 'bwrap' | 'none';
  json: boolean;
}
interface GcOptions {
  maxMb?: string;
  all: boolean;
  json: boolean;
}

/**
 * Adds `genesis deps`: the machine's cache of prepared dependency sets (verify.deps). `list`
 * (the default) shows each set, `prepare` installs a world's set ahead of its first gate, `gc`
 * removes leftovers and the least recently used sets beyond the cap.
 */
export function define(program: Command): void {
  const deps = program
    .command('deps')
    .description(
      'the dependency sets prepared on this machine (verify.deps): list them, prepare one ahead of time, collect garbage. The cache lives in $GENESIS_CACHE_DIR/deps (default ~/.cache/genesis/deps), capped at $GENESIS_DEPS_CACHE_MB (default 20480)',
    );
  deps
    .command('list', { isDefault: true })
    .description('each prepared set: key, size, entries, last use, outputs and install command')
    .addOption(
      new Option('--json', 'print JSON: {root, capBytes, sets: [{key, bytes, entries, lastUsed, createdAt, paths, files, install, environment, dir}]}').default(
        false,
      ),
    )
    .action(async (opts: ListOptions) => {
      const { listDeps } = await import('./action.js');
      await listDeps(opts.json);
    });
  deps
    .command('prepare')
    .description("install a world's dependency set for its accepted head (or --commit) now, so no gate waits for it")
    .addOption(worldOption())
    .option('--commit <ref>', 'the commit whose dependency files to prepare (default: the accepted head)')
    .addOption(sandboxOption())
    .addOption(new Option('--json', 'print JSON: {key, hit, durationMs, dir}').default(false))
    .action(async (opts: PrepareOptions) => {
      const { prepareWorldDeps } = await import('./action.js');
      await prepareWorldDeps({ world: requireWorld(opts), commit: opts.commit, sandbox: opts.sandbox, json: opts.json });
    });
  deps
    .command('gc')
    .description('remove what dead installs left behind, then the least recently used sets until the cache fits its cap (sets used in the last hour stay)')
    .option('--max-mb <n>', 'the cap to fit, in MiB (default $GENESIS_DEPS_CACHE_MB or 20480)')
    .addOption(new Option('--all', 'remove every set, even those used in the last hour (a gate running now may lose its set)').default(false))
    .addOption(new Option('--json', 'print JSON: {removed: [key], staging, bytesBefore, bytesAfter}').default(false))
    .action(async (opts: GcOptions) => {
      const { collectDeps } = await import('./action.js');
      await collectDeps(opts);
    });
}
