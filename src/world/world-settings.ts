import { git } from '../git/git.js';

export type SandboxChoice = 'auto' | 'docker' | 'bwrap' | 'none';

const INIT_SANDBOX_KEY = 'genesis.sandbox';

/**
 * Remembers the sandbox a person chose at `genesis init --sandbox`, in the world's own git config
 * (a setting of this machine's copy, like a remote: a mirror clone is judged where it runs).
 */
export async function writeInitSandbox(repo: string, choice: SandboxChoice): Promise<void> {
  await git(['config', INIT_SANDBOX_KEY, choice], { cwd: repo });
}

/** The sandbox chosen at init, or null when init was not given one. */
export async function readInitSandbox(repo: string): Promise<SandboxChoice | null> {
  const r = await git(['config', '--get', INIT_SANDBOX_KEY], { cwd: repo, okExitCodes: [1] });
  const value = r.stdout.trim();
  return value === 'auto' || value === 'docker' || value === 'bwrap' || value === 'none' ? value : null;
}
