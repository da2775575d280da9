import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/** Default size cap of the dependency cache: 20 GiB. */
export const DEFAULT_DEPS_CACHE_MB = 20 * 1024;

/**
 * Where this machine keeps prepared dependency sets: `$GENESIS_CACHE_DIR/deps`, else
 * `$XDG_CACHE_HOME/genesis/deps`, else `~/.cache/genesis/deps`. Each worker has its own; nothing
 * in it is shared between machines.
 */
export function defaultDepsCacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  if (env.GENESIS_CACHE_DIR) return join(resolve(env.GENESIS_CACHE_DIR), 'deps');
  if (env.XDG_CACHE_HOME) return join(resolve(env.XDG_CACHE_HOME), 'genesis', 'deps');
  return join(homedir(), '.cache', 'genesis', 'deps');
}

/** The size cap in bytes: `$GENESIS_DEPS_CACHE_MB` (MiB), else the default. */
export function defaultDepsCacheCap(env: NodeJS.ProcessEnv = process.env): number {
  const mb = Number(env.GENESIS_DEPS_CACHE_MB);
  return (Number.isFinite(mb) && mb > 0 ? mb : DEFAULT_DEPS_CACHE_MB) * 1024 * 1024;
}
