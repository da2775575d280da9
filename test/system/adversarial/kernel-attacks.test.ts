import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { installWithBwrap } from '../../../src/deps/installers/bwrap.js';
import { createSandbox } from '../../../src/sandbox/create-sandbox.js';
import { itWith } from '../../helpers/services.js';
import { tempDir } from '../../helpers/temp-dir.js';

/**
 * Kernel state shared between sandboxes: a gate or an install that stores a note in a kernel
 * keyring (add_key), so that the next sandbox of the same user namespace reads it from
 * /proc/keys or request_key. Bubblewrap sandboxes run with a seccomp filter that refuses the
 * keyring calls (and the rest Docker's default profile refuses): the store fails, the read finds
 * nothing.
 */
const KEY = 'genesis-leak-7c1e';
const STORE = `import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
# add_key("user", KEY, payload, len, KEY_SPEC_USER_KEYRING) and request_key("user", KEY, NULL, 0)
r = libc.syscall(248, b"user", b"${KEY}", b"hidden test text", 16, ctypes.c_long(-4))
print("add_key", r, ctypes.get_errno())
r = libc.syscall(249, b"user", b"${KEY}", None, 0)
print("request_key", r, ctypes.get_errno())
r = libc.syscall(272, 0x10000000)
print("unshare", r, ctypes.get_errno())
`;
const limits = { cpus: 1, memoryMb: 256, pids: 64 };

describe('a key stored in a kernel keyring by one sandbox', () => {
  itWith('bwrap')('is refused in a bwrap gate and a bwrap install, and the next gate finds none', async () => {
    const sandbox = await createSandbox('bwrap', { image: 'genesis/node:20' });
    const first = await tempDir('genesis-keys-');
    await writeFile(join(first, 'store.py'), STORE);
    const gate = await sandbox.run({ command: 'python3 store.py', workDir: first, timeoutMs: 60_000, limits });
    expect(gate.output).toContain('add_key -1 1');
    expect(gate.output).toContain('request_key -1 1');
    expect(gate.output).toContain('unshare -1 1');
    const install = await tempDir('genesis-keys-install-');
    await writeFile(join(install, 'store.py'), STORE);
    const installed = await installWithBwrap({ workDir: install, command: 'python3 store.py', timeoutMs: 60_000, memoryMb: 256, image: 'genesis/node:20' });
    expect(installed.output).toContain('add_key -1 1');
    const next = await tempDir('genesis-keys-next-');
    await writeFile(join(next, 'store.py'), STORE.replace('r = libc.syscall(248', 'r = 0 and libc.syscall(248'));
    const reader = await sandbox.run({ command: 'cat /proc/keys 2>&1; python3 store.py', workDir: next, timeoutMs: 60_000, limits });
    expect(reader.output).not.toContain(KEY);
    expect(reader.output).toContain('request_key -1 1');
    // An ordinary program still runs under the filter.
    expect((await sandbox.run({ command: 'node -e "console.log(6*7)"', workDir: next, timeoutMs: 60_000, limits })).output).toContain('42');
  });
});
