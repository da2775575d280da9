import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
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
 * Needs root (mount). Every operation is one process (a script, or umount alone), and a gate's
 * mounts are one `mount -a`: a gate pays for a few spawns, not ten.
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
/** The slot's mount table for a gate's tree (fstab format), written for one `mount -a`. */
const MOUNT_TABLE = 'fstab';

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

// One `mount -a` mounts the whole table in order (a process per mount cost ~1 ms each); `bind,ro`
// binds and remounts read-only. A tree to hand to its user ("uid:gid", or "-") is chowned here
// first, as prepareWorkDir would: one script for both. mount -a goes on past an entry that fails
// but then exits non-zero, and the run never starts (its command is sent only after this).
const MOUNT_TREE = `set -e
s=$1; g=$2; o=$3
if [ "$o" != - ]; then
  find "$g" \\( ! -uid "\${o%:*}" -o ! -gid "\${o#*:}" \\) -exec chown -h "$o" -- {} + || exit ${HAND_OVER_FAILED}
fi
mount -a -T "$s/${MOUNT_TABLE}"`;

/**
 * Hands the gate's tree to `owner` when given (see prepareWorkDir), puts it and its mounts
 * (parents first) together in `stage` and binds the whole into `work`. Resolves 'hand-over-failed'
 * when the chown failed: nothing is mounted then, and the caller's own hand-over says why.
 */
export async function mountTree(slot: SlotPaths, tree: string, mounts: readonly TreeMount[], owner?: SandboxUser): Promise<'mounted' | 'hand-over-failed'> {
  const table = [
    [tree, slot.stage, 'bind'],
    ...mounts.map((m) => [m.source, `${slot.stage}/${m.target}`, m.readOnly ? 'bind,ro' : 'bind']),
    [slot.stage, slot.work, 'rbind'],
  ];
  await writeFile(
    join(slot.dir, MOUNT_TABLE),
    table.map(([source, target, options]) => `${mangle(source!)} ${mangle(target!)} none ${options} 0 0\n`).join(''),
    {
      mode: 0o600,
    },
  );
  return sh(MOUNT_TREE, [slot.dir, tree, owner ? `${owner.uid}:${owner.gid}` : '-']).then(
    () => 'mounted' as const,
    (error: { code?: unknown }) => {
      if (error.code === HAND_OVER_FAILED) return 'hand-over-failed' as const;
      throw error;
    },
  );
}

/** A path as an fstab field: whitespace, backslashes and control characters as octal escapes (libmount unmangles them). */
function mangle(path: string): string {
  return [...path].map((c) => (c <= ' ' || c === '\\' || c === '\x7f' ? `\\${c.charCodeAt(0).toString(8).padStart(3, '0')}` : c)).join('');
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
  const cleaned = await sh(`rm -f "$1/work/${SLOT_MARKER}" "$1/command" "$1/output" "$1/${MOUNT_TABLE}"; rmdir "$1/work" "$1/stage" "$1"`, [slot.dir]).then(
    () => true,
    () => false,
  );
  return cleaned;
}

/**
 * Unmounts what the slot holds, synchronously for the caller: the gate's tree is free afterwards.
 * Lazily, each tree in one call (its container's processes are gone, so nothing holds them; a
 * mount at a time cost a call each): no dentry of the tree is a mount point once this resolves.
 */
export async function unmountSlot(slot: SlotPaths): Promise<void> {
  await execFileAsync('umount', ['-l', slot.work, slot.stage], { env: TOOL_ENV }).catch(() => undefined);
}

/** Mount points at or under `dir` in this process's mount namespace. */
export async function mountsUnder(dir: string): Promise<string[]> {
  const table = await readFile('/proc/self/mountinfo', 'utf8').catch(() => '');
  return table
    .split('\n')
    .map((line) => (line.split(' ')[4] ?? '').replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8))))
    .filter((point) => point === dir || point.startsWith(`${dir}/`));
}

const TOOL_ENV = { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin', LANG: 'C' };

async function sh(script: string, args: readonly string[]): Promise<void> {
  await execFileAsync('sh', ['-c', script, 'sh', ...args], { env: TOOL_ENV });
}
