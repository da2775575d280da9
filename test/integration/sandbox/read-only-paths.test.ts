import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { BwrapSandbox, DockerSandbox } from '../../../src/sandbox/index.js';
import type { Sandbox } from '../../../src/sandbox/index.js';
import { itWith } from '../../helpers/services.js';
import { specFor } from './sandbox-contract.js';
import { testPool, warmOnly } from './warm-only.js';

/** Each attack prints `name=<exit code>`; every one must fail, and the files stay as they were. */
const ATTACKS = [
  ['write-file', 'echo x > test/sub/a.test.js'],
  ['remove-file', 'rm -f test/sub/a.test.js'],
  ['create-in-dir', 'touch test/new.test.js'],
  ['rename-dir', 'mv test moved'],
  ['rename-parent-of-file', 'mv lib lib2'],
  ['swap-parent-of-file', 'mv lib/deep lib/other'],
  ['write-nested-file', 'echo x > lib/deep/check.js'],
  ['write-through-symlink', 'ln -s lib/deep/check.js link && echo x > link'],
  ['chmod', 'chmod 666 world.yaml'],
  ['truncate', 'truncate -s 0 world.yaml'],
  ['node-write', `node -e "require('fs').writeFileSync('test/sub/a.test.js', 'x')"`],
] as const;

async function protectedWorkDir(command: string) {
  const spec = await specFor(command, { readOnlyPaths: ['test', 'lib/deep/check.js', 'world.yaml'] });
  await mkdir(join(spec.workDir, 'test/sub'), { recursive: true });
  await mkdir(join(spec.workDir, 'lib/deep'), { recursive: true });
  for (const file of ['test/sub/a.test.js', 'lib/deep/check.js', 'world.yaml']) await writeFile(join(spec.workDir, file), 'original\n');
  return spec;
}

const pool = testPool();
for (const [service, make, variant] of [
  ['bwrap', () => new BwrapSandbox(), ''],
  ['docker', () => new DockerSandbox({ image: 'genesis/node:20' }), ''],
  ['docker', () => warmOnly(pool), ' (warm pool)'],
] as const) {
  describe(`readOnlyPaths in the ${service}${variant} sandbox`, () => {
    const it = itWith(service);
    const sandbox: () => Sandbox = make;

    it('refuses every way of changing a read-only file or directory, and leaves the rest writable', async () => {
      const script = [
        ...ATTACKS.map(([name, cmd]) => `(${cmd}) 2>/dev/null; echo "${name}=$?"`),
        'echo free > free.txt && echo free=$?',
        'mkdir -p lib/deep/new && echo y > lib/deep/new/f && echo beside=$?',
      ].join('\n');
      const spec = await protectedWorkDir(script);
      const result = await sandbox().run(spec);
      const codes = Object.fromEntries(
        result.output
          .trim()
          .split('\n')
          .filter((l) => l.includes('='))
          .map((l) => l.split('=') as [string, string]),
      );
      for (const [name] of ATTACKS) expect(codes[name], `${name} succeeded:\n${result.output}`).not.toBe('0');
      expect(codes).toMatchObject({ free: '0', beside: '0' });
      for (const file of ['test/sub/a.test.js', 'lib/deep/check.js', 'world.yaml']) expect(await readFile(join(spec.workDir, file), 'utf8')).toBe('original\n');
    });

    it('runs as before without readOnlyPaths', async () => {
      const spec = await protectedWorkDir('echo changed > world.yaml');
      const result = await sandbox().run({ ...spec, readOnlyPaths: undefined });
      expect(result.exitCode).toBe(0);
      expect(await readFile(join(spec.workDir, 'world.yaml'), 'utf8')).toBe('changed\n');
    });
  });
}
