import { chmod, chown, mkdir, rm, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { handOverSmallTree } from '../gate/hand-over.js';
import { readMountinfo } from '../process/mountinfo.js';
import type { SandboxUser } from '../gate/work-dir.js';
import { runChecked } from '../../spawn/spawner.js';

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
/** The slot's own mounts and a gate's tree mounts, as fstab tables for one `mount -a` each (a process per mount cost ~1 ms). */
const SLOT_TABLE = 'slot.fstab';
const TREE_TABLE = 'tree.fstab';

export function slotPaths(dir: string): SlotPaths {
  return { dir, work: join(dir, 'work'), stage: join(dir, 'stage'), command: join(dir, 'command'), output: join(dir, 'output') };
}

/**
 * Makes a slot's directory, its FIFOs (the command's readable, the output's writable by `owner`
 * only, "uid:gid") and its mounts: the slot itself a private mount (what is mounted in stage
 * stays private without a step of its own), `work` a shared one. Files and modes are set here,
 * the FIFOs and mounts by one script (mkfifo, mount -a).
 */
export async function prepareSlot(slot: SlotPaths, owner: string): Promise<void> {
  const [uid, gid = uid] = owner.split(':').map(Number);
  if (!Number.isInteger(uid) || !Number.isInteger(gid)) throw new Error(`prepareSlot: owner ${owner} is not uid:gid`);
  await mkdir(slot.dir, { mode: 0o700 });
  await Promise.all([mkdir(slot.work, { mode: 0o755 }), mkdir(slot.stage, { mode: 0o755 })]);
  await writeFile(join(slot.work, SLOT_MARKER), '');
  await writeTable(join(slot.dir, SLOT_TABLE), [
    [slot.dir, slot.dir, 'bind,private'],
    [slot.work, slot.work, 'bind,shared'],
  ]);
  await sh('set -e\nmkfifo -m 0600 "$1/command" "$1/output"\nmount -a -T "$1/$2"', [slot.dir, SLOT_TABLE]);
  for (const [fifo, mode] of [
    [slot.command, 0o400],
    [slot.output, 0o200],
  ] as const) {
    await chown(fifo, uid!, gid!);
    await chmod(fifo, mode);
  }
}

/** One mount under the gate's tree: `source` at `target` (relative to the tree), read-only or not. */
export interface TreeMount {
  source: string;
  target: string;
  readOnly: boolean;
}

/** Exit code of the mount script when the tree could not be handed to its user (nothing was mounted). */
const HAND_OVER_FAILED = 97;

// A large tree to hand to its user ("uid:gid") is chowned first, as prepareWorkDir would (every
// entry, links themselves and never their targets: a fresh copy's ctimes matter to no one), then
// mounted: one script for both. `bind,ro` binds and remounts read-only. mount -a goes on past an
// entry that fails but then exits non-zero, and the run never starts (its command is sent after).
const CHOWN_AND_MOUNT = `set -e
chown -R -h -- "$3" "$2" || exit ${HAND_OVER_FAILED}
mount -a -T "$1/${TREE_TABLE}"`;

/**
 * Hands the gate's tree to `owner` when given (see prepareWorkDir: a small tree from this
 * process, a large one by chown -R), puts it and its mounts (parents first) together in `stage`
 * and binds the whole into `work`, with one `mount -a`. Resolves 'hand-over-failed' when the
 * chown failed: nothing is mounted then, and the caller's own hand-over says why.
 */
export async function mountTree(slot: SlotPaths, tree: string, mounts: readonly TreeMount[], owner?: SandboxUser): Promise<'mounted' | 'hand-over-failed'> {
  await writeTable(join(slot.dir, TREE_TABLE), [
    [tree, slot.stage, 'bind'],
    ...mounts.map((m) => [m.source, `${slot.stage}/${m.target}`, m.readOnly ? 'bind,ro' : 'bind'] as const),
    [slot.stage, slot.work, 'rbind'],
  ]);
  const handed = owner ? await handOverSmallTree(tree, owner) : 'handed-over';
  if (handed === 'failed') return 'hand-over-failed';
  const mounted =
    handed === 'too-large' && owner
      ? sh(CHOWN_AND_MOUNT, [slot.dir, tree, `${owner.uid}:${owner.gid}`])
      : runChecked('mount', ['-a', '-T', join(slot.dir, TREE_TABLE)], TOOL_ENV);
  return mounted.then(
    () => 'mounted' as const,
    (error: { code?: unknown }) => {
      if (error.code === HAND_OVER_FAILED) return 'hand-over-failed' as const;
      throw error;
    },
  );
}

/** Writes an fstab table of bind mounts (source, target, options), in order, readable by root only. */
async function writeTable(file: string, rows: ReadonlyArray<readonly [string, string, string]>): Promise<void> {
  const text = rows.map(([source, target, options]) => `${mangle(source)} ${mangle(target)} none ${options} 0 0\n`).join('');
  await writeFile(file, text, { mode: 0o600 });
}

/** A path as an fstab field: whitespace, backslashes and control characters as octal escapes (libmount unmangles them). */
function mangle(path: string): string {
  return [...path].map((c) => (c <= ' ' || c === '\\' || c === '\x7f' ? `\\${c.charCodeAt(0).toString(8).padStart(3, '0')}` : c)).join('');
}

/**
 * Takes every mount of the slot away (the gate's tree is its own again: it can be renamed or
 * removed), then removes the slot's own files one by one: never recursively, so a tree still
 * mounted by mistake could not be deleted through the slot. Resolves false when something is left.
 */
export async function removeSlot(slot: SlotPaths): Promise<boolean> {
  // One lazy unmount of the slot takes everything under it; what a half-made slot has beside that, one by one.
  await umount([slot.dir]);
  const left = await mountsUnder(slot.dir);
  if (left.length > 0) await umount(left.sort((a, b) => b.length - a.length));
  if ((await mountsUnder(slot.dir)).length > 0) return false;
  const files = [join(slot.work, SLOT_MARKER), slot.command, slot.output, join(slot.dir, SLOT_TABLE), join(slot.dir, TREE_TABLE)];
  const gone = (error: NodeJS.ErrnoException) => (error.code === 'ENOENT' ? undefined : Promise.reject(error));
  try {
    for (const file of files) await rm(file, { force: true });
    for (const dir of [slot.work, slot.stage, slot.dir]) await rmdir(dir).catch(gone);
    return true;
  } catch {
    return false;
  }
}

/**
 * Unmounts what the slot holds, synchronously for the caller: the gate's tree is free afterwards.
 * Lazily, each tree in one call (its container's processes are gone, so nothing holds them; a
 * mount at a time cost a call each): no dentry of the tree is a mount point once this resolves.
 */
export async function unmountSlot(slot: SlotPaths): Promise<void> {
  await umount([slot.work, slot.stage]);
}

/** Detaches each mount point, with what is mounted under it, at once; one that is not mounted is passed over. */
async function umount(points: readonly string[]): Promise<void> {
  await runChecked('umount', ['-l', ...points], TOOL_ENV).catch(() => undefined);
}

/** Mount points at or under `dir` in this process's mount namespace. */
export async function mountsUnder(dir: string): Promise<string[]> {
  return (await readMountinfo()).map((m) => m.point).filter((point) => point === dir || point.startsWith(`${dir}/`));
}

const TOOL_ENV = { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin', LANG: 'C' };

async function sh(script: string, args: readonly string[]): Promise<void> {
  await runChecked('sh', ['-c', script, 'sh', ...args], TOOL_ENV);
}
