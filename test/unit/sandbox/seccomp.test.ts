import { describe, expect, it } from 'vitest';
import { CLONE_NAMESPACE_FLAGS, REFUSED_SYSCALLS, seccompProgram } from '../../../src/sandbox/gate/bwrap/seccomp.js';

const X86_64 = 0xc000003e;

/** Runs the classic BPF program on one syscall the way the kernel does: what it returns. */
function decide(program: Buffer, call: { arch?: number; nr: number; arg0?: number }): string {
  const data = Buffer.alloc(64);
  data.writeUInt32LE(call.nr >>> 0, 0);
  data.writeUInt32LE((call.arch ?? X86_64) >>> 0, 4);
  data.writeUInt32LE((call.arg0 ?? 0) >>> 0, 16);
  let acc = 0;
  for (let pc = 0; pc < program.length / 8; pc++) {
    const [code, jt, jf, k] = [program.readUInt16LE(pc * 8), program.readUInt8(pc * 8 + 2), program.readUInt8(pc * 8 + 3), program.readUInt32LE(pc * 8 + 4)];
    if (code === 0x20) acc = data.readUInt32LE(k);
    else if (code === 0x06) return k === 0x7fff0000 ? 'allow' : `errno ${k & 0xffff}`;
    else if (code === 0x15) pc += acc === k ? jt : jf;
    else if (code === 0x35) pc += acc >= k ? jt : jf;
    else if (code === 0x45) pc += (acc & k) !== 0 ? jt : jf;
    else throw new Error(`unknown instruction ${code}`);
  }
  throw new Error('the program ran off its end');
}

describe('the bubblewrap seccomp program', () => {
  const program = seccompProgram();

  it('refuses the keyring calls and every listed call with EPERM, and allows the rest', () => {
    for (const nr of Object.values(REFUSED_SYSCALLS)) expect(decide(program, { nr })).toBe('errno 1');
    for (const nr of [0, 1, 57, 59, 231, 425]) expect(decide(program, { nr })).toBe(nr === 425 ? 'errno 1' : 'allow');
  });

  it('refuses clone with any namespace flag, allows a fork or a thread, and makes clone3 fail with ENOSYS', () => {
    expect(decide(program, { nr: 56, arg0: 0x10000000 | 17 })).toBe('errno 1');
    for (let bit = 0; bit < 32; bit++) {
      const flag = 2 ** bit;
      expect(decide(program, { nr: 56, arg0: flag | 17 })).toBe((flag & CLONE_NAMESPACE_FLAGS) !== 0 ? 'errno 1' : 'allow');
    }
    // What glibc passes for pthread_create.
    expect(decide(program, { nr: 56, arg0: 0x3d0f00 })).toBe('allow');
    expect(decide(program, { nr: 435 })).toBe('errno 38');
  });

  it("lets a process take only the personalities Docker's profile allows", () => {
    for (const p of [0, 8, 0x20000, 0x20008, 0xffffffff]) expect(decide(program, { nr: 135, arg0: p })).toBe('allow');
    expect(decide(program, { nr: 135, arg0: 0x0040000 })).toBe('errno 1');
  });

  it('refuses x32 calls and calls of another architecture', () => {
    expect(decide(program, { nr: 0x40000000 | 1 })).toBe('errno 1');
    expect(decide(program, { arch: 0x40000003, nr: 1 })).toBe('errno 1');
  });
});
