import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { SandboxUser } from './work-dir.js';

const execFileAsync = promisify(execFile);

/**
 * Host-side mounts of a warm sandbox slot (see warm-pool.ts). A slot is a directory of its own:
 * - `work`: bound over itself and made a shared mount before its container starts; the container
 *   binds it at /work as a slave, so what is mounted here later appears there. It holds only
 *   MARKER, which a gate's tree hides once mounted over it.
 * - `stage`: where a gate's tree and its read-only mounts are put together privately, then bound
 *   into `work` in one step (a flag like read-only does not follow a mount into a slave; a copy
 *   of a mount that already has it does).
 * - `command`: a FIFO the container's first process reads the command from.
 * - `output`: a FIFO the command's stdout and stderr go to, read by the host (warm-output.ts).
 * Needs root (mount). Every operation is one `sh` process: a gate pays for one spawn, not ten.
 */
export interface SlotPaths {
  dir: string;
  work: string;
  stage: string;
  command: string;
  output: string;
}

/** The file the container looks for to tell an empty slot from a gate's tree: if it sees it, nothing was mounted. */
export const SLOT_MARKER = '.genesis-warm-slot';

export function slotPaths(dir: string): SlotPaths {
  return { dir, work: join(dir, 'work'), stage: join(dir, 'stage'), command: join(dir, 'command'), output: join(dir, 'output') };
}

// The slot itself a private mount: what is mounted in stage stays private without a step of its own.
const PREPARE = `set -e
mkdir -m 0700 "$1"
mkdir -m 0755 "$1/work" "$1/stage"
: > "$1/work/${SLOT_MARKER}"
mkfifo -m 0400 "$1/command"
mkfifo -m 0200 "$1/output"
chown "$2" "$1/command" "$1/output"
mount --bind "$1" "$1"
mount --make-private "$1"
mount --bind "$1/work" "$1/work"
mount --make-shared "$1/work"`;

/** Makes a slot's directory (a private mount), FIFOs (the command's readable, the output's writable by `owner` only) and shared mount point. */
export async function prepareSlot(slot: SlotPaths, owner: string): Promise<void> {
  await sh(PREPARE, [slot.dir, owner]);
}

/** One mount under the gate's tree: `source` at `target` (relative to the tree), read-only or not. */
export interface TreeMount {
  source: string;
  target: string;
  readOnly: boolean;
}

/** Exit code of the mount script when the tree could not be handed to its user (nothing was mounted). */
const HAND_OVER_FAILED = 97;

// mount --bind -o ro binds and remounts read-only in one process. A tree to hand to its user
// ("uid:gid", or "-") is chowned here first, as prepareWorkDir would: one process for both, not two.
const MOUNT_TREE = `set -e
s=$1; g=$2; o=$3; shift 3
if [ "$o" != - ]; then
  find "$g" \\( ! -uid "\${o%:*}" -o ! -gid "\${o#*:}" \\) -exec chown -h "$o" -- {} + || exit ${HAND_OVER_FAILED}
fi
mount --bind "$g" "$s/stage"
while [ $# -gt 0 ]; do
  mount --bind -o "$3" "$1" "$s/stage/$2"
  shift 3
done
mount --rbind "$s/stage" "$s/work"`;

/**
 * Hands the gate's tree to `owner` when given (see prepareWorkDir), puts it and its mounts
 * (parents first) together in `stage` and binds the whole into `work`. Resolves 'hand-over-failed'
 * when the chown failed: nothing is mounted then, and the caller's own hand-over says why.
 */
export async function mountTree(slot: SlotPaths, tree: string, mounts: readonly TreeMount[], owner?: SandboxUser): Promise<'mounted' | 'hand-over-failed'> {
  const args = [slot.dir, tree, owner ? `${owner.uid}:${owner.gid}` : '-', ...mounts.flatMap((m) => [m.source, m.target, m.readOnly ? 'ro' : 'rw'])];
  return sh(MOUNT_TREE, args).then(
    () => 'mounted' as const,
    (error: { code?: unknown }) => {
      if (error.code === HAND_OVER_FAILED) return 'hand-over-failed' as const;
      throw error;
    },
  );
}

const UNMOUNT = 'umount -R "$1/work" "$1/stage" 2>/dev/null || umount -R -l "$1/work" "$1/stage" 2>/dev/null || true';
const UNMOUNT_ALL = `${UNMOUNT}; umount -R "$1" 2>/dev/null || umount -R -l "$1" 2>/dev/null || true`;

/**
 * Takes every mount of the slot away (the gate's tree is its own again: it can be renamed or
 * removed), then removes the slot's own files one by one: never recursively, so a tree still
 * mounted by mistake could not be deleted through the slot. Resolves false when something is left.
 */
export async function removeSlot(slot: SlotPaths): Promise<boolean> {
  await sh(UNMOUNT_ALL, [slot.dir]).catch(() => undefined);
  if ((await mountsUnder(slot.dir)).length > 0) return false;
  const cleaned = await sh(`rm -f "$1/work/${SLOT_MARKER}" "$1/command" "$1/output"; rmdir "$1/work" "$1/stage" "$1"`, [slot.dir]).then(
    () => true,
    () => false,
  );
  return cleaned;
}

/** Unmounts what the slot holds, synchronously for the caller: the gate's tree is free afterwards. */
export async function unmountSlot(slot: SlotPaths): Promise<void> {
  await sh(UNMOUNT, [slot.dir]).catch(() => undefined);
}

/** Mount points at or under `dir` in this process's mount namespace. */
export async function mountsUnder(dir: string): Promise<string[]> {
  const table = await readFile('/proc/self/mountinfo', 'utf8').catch(() => '');
  return table
    .split('\n')
    .map((line) => (line.split(' ')[4] ?? '').replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8))))
    .filter((point) => point === dir || point.startsWith(`${dir}/`));
}

async function sh(script: string, args: readonly string[]): Promise<void> {
  await execFileAsync('sh', ['-c', script, 'sh', ...args], { env: { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin', LANG: 'C' } });
}
