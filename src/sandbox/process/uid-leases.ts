import { randomBytes, randomInt } from 'node:crypto';
import { linkSync, lstatSync, mkdirSync, readdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GenesisError } from '../../errors/genesis-error.js';

/** The uids sandboxes are given (100000–159999): above any account a distribution makes. */
export const UID_RANGE = { first: 100_000, count: 60_000 } as const;

/** Whether `uid` is one sandboxes are leased from (UID_RANGE). */
export function isLeasedUid(uid: number): boolean {
  return Number.isInteger(uid) && uid >= UID_RANGE.first && uid < UID_RANGE.first + UID_RANGE.count;
}

/** A uid held for one sandbox: no other sandbox of this machine gets it until it is released. */
export interface UidLease {
  readonly uid: number;
  /** Gives the uid back (idempotent); a process that ends gives back every uid it holds. */
  release(): void;
}

/**
 * Where the leases live: one directory for the machine, since uids are the kernel's, not a
 * world's (GENESIS_UID_LEASES names another, for a test that wants a range of its own).
 */
export function uidLeaseDir(): string {
  return process.env.GENESIS_UID_LEASES ?? join(tmpdir(), 'genesis-uid-leases');
}

/**
 * Claims a uid no live sandbox of this machine holds, across processes (several workers on one
 * host), and preferably `prefer` (the uid a work dir already belongs to, so that the steps of one
 * gate need not hand their tree over again).
 *
 * A claim is a file `<uid>.<pid>.<random>` in the lease directory holding its owner's pid and
 * start time, made whole elsewhere and linked into place. A claimant keeps its claim only if,
 * looking after making it, it finds no other claim of that uid whose owner lives: of two that race
 * for one uid at least one sees the other, so both may back off but never both win. A claim whose
 * owner is gone (a crash) counts for nothing and is removed by the next claimant; a process gives
 * its claims back when it releases them or exits.
 */
export function leaseUid(
  prefer?: number,
  { dir = uidLeaseDir(), range = UID_RANGE }: { dir?: string; range?: { first: number; count: number } } = {},
): UidLease {
  ensureDir(dir);
  const me = ownerLine(process.pid);
  if (!me)
    throw new GenesisError('sandbox-uid-leases', 'cannot read this process in /proc to lease a sandbox uid', {
      hint: 'run Genesis on Linux with /proc mounted',
    });
  const scratch = join(dir, `.claim-${process.pid}-${randomBytes(6).toString('hex')}`);
  writeFileSync(scratch, me, { mode: 0o600 });
  try {
    const claims = claimsByUid(dir);
    // Near the bottom of the range, spread over a few more uids than are held: claimants seldom meet on one, and a
    // long-lived worker keeps to a small set of uids (each has its own /etc files and cached state).
    const start = randomInt(Math.min(range.count, 2 * claims.size + 16));
    const first = prefer !== undefined && Number.isInteger(prefer) && prefer >= range.first && prefer < range.first + range.count ? [prefer] : [];
    for (let i = -first.length; i < range.count; i++) {
      const uid = i < 0 ? first[0]! : range.first + ((start + i) % range.count);
      if (i >= 0 && uid === prefer) continue;
      // Held by a live owner when the directory was read: not worth a claim.
      if ((claims.get(uid) ?? []).some((file) => ownerAlive(join(dir, file)))) continue;
      const lease = tryClaim(dir, uid, scratch);
      if (lease) return lease;
    }
  } finally {
    rmQuietly(scratch);
  }
  throw new GenesisError('sandbox-uid-exhausted', `every sandbox uid of ${range.first}–${range.first + range.count - 1} is held by a live sandbox`, {
    hint: `run fewer sandboxes at once on this machine; the leases are in ${dir}`,
  });
}

const held = new Set<string>();
let exitHook = false;

function tryClaim(dir: string, uid: number, scratch: string): UidLease | null {
  const name = `${uid}.${process.pid}.${randomBytes(6).toString('hex')}`;
  const path = join(dir, name);
  linkSync(scratch, path);
  const others = (claimsByUid(dir).get(uid) ?? []).filter((file) => file !== name);
  if (others.some((file) => ownerAlive(join(dir, file)))) {
    rmQuietly(path);
    return null;
  }
  // Left by owners that are gone: nobody else removes them.
  for (const file of others) rmQuietly(join(dir, file));
  held.add(path);
  if (!exitHook) {
    exitHook = true;
    process.once('exit', () => {
      for (const file of held) rmQuietly(file);
    });
  }
  let released = false;
  return {
    uid,
    release: () => {
      if (released) return;
      released = true;
      held.delete(path);
      rmQuietly(path);
    },
  };
}

/** The claim files in the directory, by uid. */
function claimsByUid(dir: string): Map<number, string[]> {
  const out = new Map<number, string[]>();
  for (const name of readdirSync(dir)) {
    const match = /^(\d+)\.\d+\.[0-9a-f]+$/.exec(name);
    if (!match) continue;
    const uid = Number(match[1]);
    out.set(uid, [...(out.get(uid) ?? []), name]);
  }
  return out;
}

/** `<pid> <start time>`: the start time tells a pid the kernel gave to a newer process apart. */
function ownerLine(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const start = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
    return start ? `${pid} ${start}\n` : null;
  } catch {
    return null;
  }
}

function ownerAlive(file: string): boolean {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return false; // released meanwhile
  }
  const pid = Number(text.split(' ')[0]);
  return Number.isInteger(pid) && pid > 0 && ownerLine(pid) === text;
}

/** The directory, made private to this user; one somebody else owns or a link is refused (its leases could be forged). */
function ensureDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const info = lstatSync(dir);
  if (!info.isDirectory() || info.uid !== process.getuid?.() || (info.mode & 0o022) !== 0) {
    throw new GenesisError('sandbox-uid-leases', `${dir} is not a directory of this user's alone, so sandbox uids cannot be leased there`, {
      hint: `remove ${dir} (or set GENESIS_UID_LEASES to a directory of your own)`,
    });
  }
}

function rmQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // Gone already.
  }
}
