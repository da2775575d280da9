import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The syscalls a bubblewrap sandbox refuses (x86_64 numbers), as Docker's default profile does:
 * the kernel keyrings first (shared by every process of a user namespace, so a key one gate or
 * agent stored would be read by the next), then mounts, namespaces, modules, clocks, swap, reboot,
 * kexec, BPF, perf and the rest of what a sandboxed command has no business calling.
 */
export const REFUSED_SYSCALLS: Readonly<Record<string, number>> = Object.freeze({
  add_key: 248,
  request_key: 249,
  keyctl: 250,
  mount: 165,
  umount2: 166,
  pivot_root: 155,
  swapon: 167,
  swapoff: 168,
  reboot: 169,
  sethostname: 170,
  setdomainname: 171,
  iopl: 172,
  ioperm: 173,
  create_module: 174,
  init_module: 175,
  delete_module: 176,
  finit_module: 313,
  get_kernel_syms: 177,
  query_module: 178,
  quotactl: 179,
  nfsservctl: 180,
  uselib: 134,
  sysfs: 139,
  _sysctl: 156,
  adjtimex: 159,
  acct: 163,
  settimeofday: 164,
  clock_settime: 227,
  clock_adjtime: 305,
  lookup_dcookie: 212,
  kexec_load: 246,
  kexec_file_load: 320,
  unshare: 272,
  setns: 308,
  perf_event_open: 298,
  name_to_handle_at: 303,
  open_by_handle_at: 304,
  bpf: 321,
  userfaultfd: 323,
  open_tree: 428,
  move_mount: 429,
  fsopen: 430,
  fsconfig: 431,
  fsmount: 432,
  fspick: 433,
  mount_setattr: 442,
});

const AUDIT_ARCH_X86_64 = 0xc000003e;
const X32_SYSCALL_BIT = 0x40000000;
const BPF_LD_W_ABS = 0x20;
const BPF_JEQ_K = 0x15;
const BPF_JGE_K = 0x35;
const BPF_RET_K = 0x06;
const RET_ALLOW = 0x7fff0000;
const RET_ERRNO_EPERM = 0x00050000 | 1;
/** offsetof(struct seccomp_data, nr) and (…, arch). */
const NR = 0;
const ARCH = 4;

/**
 * The classic BPF program bubblewrap's `--seccomp FD` installs: an x86_64 syscall in the list
 * (or any x32 one) fails with EPERM, everything else is allowed; a syscall of another
 * architecture (a 32-bit binary) fails with EPERM too, since its numbers mean other calls. Pure.
 */
export function seccompProgram(refused: readonly number[] = Object.values(REFUSED_SYSCALLS)): Buffer {
  const ins: Array<[code: number, jt: number, jf: number, k: number]> = [];
  const n = refused.length;
  // Index of the final EPERM return, counted from each jump's next instruction.
  ins.push([BPF_LD_W_ABS, 0, 0, ARCH]);
  ins.push([BPF_JEQ_K, 0, n + 3, AUDIT_ARCH_X86_64]); // another arch: to EPERM
  ins.push([BPF_LD_W_ABS, 0, 0, NR]);
  ins.push([BPF_JGE_K, n + 1, 0, X32_SYSCALL_BIT]); // x32: to EPERM
  for (const [i, nr] of refused.entries()) ins.push([BPF_JEQ_K, n - i, 0, nr]);
  ins.push([BPF_RET_K, 0, 0, RET_ALLOW]);
  ins.push([BPF_RET_K, 0, 0, RET_ERRNO_EPERM]);
  const buf = Buffer.alloc(ins.length * 8);
  ins.forEach(([code, jt, jf, k], i) => {
    buf.writeUInt16LE(code, i * 8);
    buf.writeUInt8(jt, i * 8 + 2);
    buf.writeUInt8(jf, i * 8 + 3);
    buf.writeUInt32LE(k >>> 0, i * 8 + 4);
  });
  return buf;
}

let file: string | null | undefined;

/**
 * A file holding the program, written once per process into a directory of its own, or null on
 * a host that is not x86_64 (the numbers above are x86_64's; there the sandbox runs without it).
 */
export function seccompFile(): string | null {
  if (file !== undefined) return file;
  if (process.arch !== 'x64') {
    file = null;
    return file;
  }
  const dir = mkdtempSync(join(tmpdir(), 'genesis-seccomp-'));
  file = join(dir, 'filter.bpf');
  writeFileSync(file, seccompProgram(), { mode: 0o444 });
  return file;
}

/**
 * What goes in place of `bwrap` in an argv: a shell that opens the program on fd 9 and becomes
 * bwrap, which reads it from there (`--seccomp 9`) and installs it just before the sandboxed command.
 */
export function bwrapWithSeccomp(bwrap = 'bwrap'): string[] {
  const path = seccompFile();
  return path === null ? [bwrap] : ['/bin/sh', '-c', 'exec "$@" 9<"$0"', path, bwrap, '--seccomp', '9'];
}
