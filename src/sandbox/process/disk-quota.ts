import { mkdtemp, rmdir, stat, statfs } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { execa } from 'execa';
import { GenesisError } from '../../errors/genesis-error.js';
import { readMountinfo } from './mountinfo.js';

/**
 * Disk quotas for work dirs (`verify.limits.diskMb`, `agent.limits.diskMb`): the directory
 * becomes a tmpfs of that size, holding what it held. A command that fills it gets ENOSPC and the
 * step ends as `disk-quota`, instead of filling the host's disk until the timeout.
 *
 * Why tmpfs: mounting and unmounting one costs about a tenth of making, mounting and unmounting a
 * loop-mounted ext4 image of the same size, and project quotas need a filesystem mounted with
 * prjquota. The price is memory: a tmpfs holds its files in
 * RAM (only what is written, not its size). Under docker those pages count toward the
 * container's memory limit, so a quota above `memoryMb` ends as out-of-memory first.
 *
 * Needs root (mount). The tmpfs is mounted over the directory, hiding the original files, which
 * reappear on unmount; removeTree unmounts whatever is mounted under a tree before removing it.
 */

const TMPFS = 'tmpfs';
/** The source name of a quota's tmpfs in the mount table: how unmountUnder tells it from any other mount. */
const SOURCE = 'genesis-quota';

/** Makes `dir` a tmpfs of `mb` MiB holding a copy of its files, unless it already is a tmpfs mount. */
export async function confineDisk(dir: string, mb: number): Promise<void> {
  const path = resolve(dir);
  if (await isMountPoint(path)) return;
  if (process.getuid?.() !== 0) {
    throw new GenesisError('disk-quota-unavailable', `a disk quota (limits.diskMb: ${mb}) needs Genesis to run as root: it mounts a size-limited tmpfs`, {
      hint: 'run Genesis as root (as CI and the docker-compose workers do), or remove limits.diskMb from world.yaml',
    });
  }
  // Mounted beside the directory, filled, then moved over it: the command never sees a half copy.
  const staging = await mkdtemp(join(dirname(path), `.${basename(path)}-quota-`));
  try {
    await run(['mount', '-t', TMPFS, '-o', `size=${Math.floor(mb)}m,mode=0755`, SOURCE, staging]);
    const copied = await execa('cp', ['-a', '--', `${path}/.`, staging], { reject: false });
    if (copied.exitCode !== 0) {
      await execa('umount', [staging], { reject: false });
      throw new GenesisError('disk-quota-exceeded', `the work dir is larger than its disk quota of ${mb} MiB before any command ran`, {
        hint: 'raise limits.diskMb in world.yaml',
      });
    }
    await run(['mount', '--move', staging, path]);
  } finally {
    await rmdir(staging).catch(() => undefined);
  }
}

/** True when the filesystem of `dir` has (almost) no room left: a command filled its quota. */
export async function isDiskFull(dir: string): Promise<boolean> {
  const info = await statfs(dir).catch(() => null);
  if (!info) return false;
  // Less than 64 KiB or 1% left: nothing sane stops that close to the edge by chance.
  const free = info.bavail * info.bsize;
  return free < Math.max(64 * 1024, (info.blocks * info.bsize) / 100);
}

/**
 * Unmounts every disk quota at or under `path`, deepest first (lazily: a process may still hold
 * one). Other mounts are left alone: they are not Genesis's to undo.
 */
export async function unmountUnder(path: string): Promise<void> {
  const root = resolve(path);
  const mounts = (await readMountinfo())
    .filter((m) => m.source === SOURCE)
    .map((m) => m.point)
    .filter((point) => point === root || point.startsWith(`${root}/`))
    .sort((a, b) => b.length - a.length);
  for (const point of mounts) await execa('umount', ['-l', point], { reject: false });
}

async function isMountPoint(path: string): Promise<boolean> {
  const [self, parent] = await Promise.all([stat(path).catch(() => null), stat(dirname(path)).catch(() => null)]);
  return self !== null && parent !== null && self.dev !== parent.dev;
}

async function run(argv: string[]): Promise<void> {
  const result = await execa(argv[0]!, argv.slice(1), { reject: false });
  if (result.exitCode !== 0) {
    throw new GenesisError('disk-quota-unavailable', `${argv.join(' ')} failed: ${String(result.stderr).trim()}`, {
      hint: 'disk quotas need mount(8) and tmpfs; remove limits.diskMb from world.yaml where they cannot be had',
    });
  }
}
