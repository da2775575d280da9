import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The syscalls a bubblewrap sandbox refuses (x86_64 numbers), as Docker's default profile does:
 * the kernel keyrings first (shared by every process of a user namespace, so a key one gate or
 * agent stored would be read by the next), then mounts, namespaces, modules, clocks, swap, reboot,
 * kexec, BPF, perf and the rest of what a sandboxed command has no business calling (MORE_REFUSED,
 * and clone's namespace flags: seccompProgram).
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

/**
 * Further calls Docker's default profile refuses to a process without capabilities: io_uring
 * (newer profiles drop it: a large kernel surface, and its operations pass around the filter),
 * comparing and reaching into other processes, NUMA placement, the kernel log, fanotify.
 */
const MORE_REFUSED: Readonly<Record<string, number>> = Object.freeze({
  io_uring_setup: 425,
  io_uring_enter: 426,
  io_uring_register: 427,
  kcmp: 312,
  process_vm_readv: 310,
  process_vm_writev: 311,
  pidfd_getfd: 438,
  mbind: 237,
  set_mempolicy: 238,
  get_mempolicy: 239,
  migrate_pages: 256,
  move_pages: 279,
  syslog: 103,
  fanotify_init: 300,
  quotactl_fd: 443,
  vhangup: 153,
  chroot: 161,
});

/**
 * clone's flags that make namespaces (CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID,
 * NEWNET): refused, as Docker refuses them, since a user namespace of its own gives a process
 * every capability inside it and with them mounts, network stacks and keyrings of its own. clone3
 * passes its flags in memory a filter cannot read: it fails with ENOSYS, and libc falls back to clone.
 */
export const CLONE_NAMESPACE_FLAGS = 0x7e020000;
/** The personalities Docker's profile lets a process take (Linux's own, with or without 32-bit UIDs, and the query): none turns address randomisation off. */
const ALLOWED_PERSONALITIES = [0x0, 0x8, 0x20000, 0x20008, 0xffffffff] as const;
const SYSCALL = { clone: 56, clone3: 435, personality: 135 } as const;

const AUDIT_ARCH_X86_64 = 0xc000003e;
const X32_SYSCALL_BIT = 0x40000000;
const BPF_LD_W_ABS = 0x20;
const BPF_JEQ_K = 0x15;
const BPF_JGE_K = 0x35;
const BPF_JSET_K = 0x45;
const BPF_RET_K = 0x06;
const RET_ALLOW = 0x7fff0000;
const RET_ERRNO = 0x00050000;
const EPERM = 1;
const ENOSYS = 38;
/** offsetof(struct seccomp_data, nr), (…, arch) and the low word of args[0] (little-endian). */
const NR = 0;
const ARCH = 4;
const ARG0_LOW = 16;

type Label = 'allow' | 'eperm' | 'enosys' | 'clone' | 'personality';
type Jump = number | Label | null;
interface Insn {
  code: number;
  k: number;
  /** Where a true (jt) or false (jf) test goes: the next instruction (null), one further on (a count) or a label. */
  jt?: Jump;
  jf?: Jump;
  label?: Label;
}

/**
 * The classic BPF program bubblewrap's `--seccomp FD` installs: an x86_64 syscall in the list (or
 * any x32 one) fails with EPERM, clone with a namespace flag fails with EPERM, clone3 with ENOSYS,
 * a personality Docker would refuse with EPERM; everything else is allowed. A syscall of another
 * architecture (a 32-bit binary) fails with EPERM too, since its numbers mean other calls. Pure.
 */
export function seccompProgram(refused: readonly number[] = [...Object.values(REFUSED_SYSCALLS), ...Object.values(MORE_REFUSED)]): Buffer {
  const ins: Insn[] = [
    { code: BPF_LD_W_ABS, k: ARCH },
    { code: BPF_JEQ_K, k: AUDIT_ARCH_X86_64, jf: 'eperm' },
    { code: BPF_LD_W_ABS, k: NR },
    { code: BPF_JGE_K, k: X32_SYSCALL_BIT, jt: 'eperm' },
    { code: BPF_JEQ_K, k: SYSCALL.clone, jt: 'clone' },
    { code: BPF_JEQ_K, k: SYSCALL.clone3, jt: 'enosys' },
    { code: BPF_JEQ_K, k: SYSCALL.personality, jt: 'personality' },
    ...refused.map((nr): Insn => ({ code: BPF_JEQ_K, k: nr, jt: 'eperm' })),
    { code: BPF_RET_K, k: RET_ALLOW },
    { code: BPF_LD_W_ABS, k: ARG0_LOW, label: 'clone' },
    { code: BPF_JSET_K, k: CLONE_NAMESPACE_FLAGS, jt: 'eperm', jf: 'allow' },
    { code: BPF_LD_W_ABS, k: ARG0_LOW, label: 'personality' },
    ...ALLOWED_PERSONALITIES.map((p): Insn => ({ code: BPF_JEQ_K, k: p, jt: 'allow' })),
    { code: BPF_RET_K, k: RET_ERRNO | EPERM, label: 'eperm' },
    { code: BPF_RET_K, k: RET_ERRNO | ENOSYS, label: 'enosys' },
    { code: BPF_RET_K, k: RET_ALLOW, label: 'allow' },
  ];
  const at = new Map(ins.flatMap((insn, i) => (insn.label ? [[insn.label, i] as const] : [])));
  // A jump counts the instructions it skips after the next one: forward only, at most 255.
  const offset = (from: number, to: Jump): number => {
    if (to === null || to === undefined) return 0;
    const target = typeof to === 'number' ? from + 1 + to : at.get(to)!;
    const skip = target - from - 1;
    if (skip < 0 || skip > 255) throw new Error(`seccompProgram: a jump of ${skip} from instruction ${from}`);
    return skip;
  };
  const buf = Buffer.alloc(ins.length * 8);
  ins.forEach((insn, i) => {
    buf.writeUInt16LE(insn.code, i * 8);
    buf.writeUInt8(offset(i, insn.jt ?? null), i * 8 + 2);
    buf.writeUInt8(offset(i, insn.jf ?? null), i * 8 + 3);
    buf.writeUInt32LE(insn.k >>> 0, i * 8 + 4);
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
