import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BwrapSandbox } from '../../../src/sandbox/gate/bwrap/bwrap-sandbox.js';
import { DockerSandbox } from '../../../src/sandbox/gate/docker/docker-sandbox.js';
import { NoneSandbox } from '../../../src/sandbox/gate/none-sandbox.js';
import type { Sandbox } from '../../../src/sandbox/sandbox.js';
import { itWith } from '../../helpers/services.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { specFor } from './sandbox-contract.js';
import { testPool, warmOnly } from './warm-only.js';

/** A host directory and a host file to show inside the work dir. */
async function sources(): Promise<{ dir: string; file: string }> {
  const root = await tempDir('genesis-mount-src-');
  await mkdir(join(root, 'pkg'));
  await writeFile(join(root, 'pkg', 'index.js'), 'module.exports = 42;\n');
  await writeFile(join(root, 'lock.json'), '{"v":1}\n');
  return { dir: join(root, 'pkg'), file: join(root, 'lock.json') };
}

const READ_AND_TRY_WRITE = [
  "node -e \"console.log('value', require('./node_modules/pkg'))\"",
  'cat node_modules/.lock.json',
  'if touch node_modules/pkg/new 2>/dev/null; then echo WROTE-PKG; fi',
  'if echo x >> node_modules/.lock.json 2>/dev/null; then echo WROTE-FILE; fi',
  'touch node_modules/.cache && echo CACHE-OK',
].join('; ');

const pool = testPool();
for (const [service, make, variant] of [
  ['docker', () => new DockerSandbox({ image: 'genesis/node:20' }), ''],
  ['docker', () => warmOnly(pool), ' (warm pool)'],
  ['bwrap', () => new BwrapSandbox(), ''],
] as Array<['docker' | 'bwrap', () => Sandbox, string]>) {
  describe(`mounts in the ${service}${variant} sandbox`, () => {
    itWith(service)('shows each source read-only at its target, beside writable places of the work dir', async () => {
      const src = await sources();
      const spec = await specFor(READ_AND_TRY_WRITE, {
        mounts: [
          { source: src.dir, target: 'node_modules/pkg' },
          { source: src.file, target: 'node_modules/.lock.json' },
        ],
      });
      const result = await make().run(spec);
      expect(result.output).toContain('value 42');
      expect(result.output).toContain('{"v":1}');
      expect(result.output).not.toContain('WROTE-');
      expect(result.output).toContain('CACHE-OK');
      expect(await readFile(src.file, 'utf8')).toBe('{"v":1}\n');
    });

    itWith(service)('refuses a target that leaves the work dir or goes through a symlink', async () => {
      const src = await sources();
      await expect(make().run(await specFor('true', { mounts: [{ source: src.dir, target: '../escape' }] }))).rejects.toMatchObject({
        code: 'sandbox-mount-invalid',
      });
      const spec = await specFor('true');
      await symlink('/etc', join(spec.workDir, 'node_modules'));
      await expect(make().run({ ...spec, mounts: [{ source: src.dir, target: 'node_modules/pkg' }] })).rejects.toMatchObject({ code: 'sandbox-mount-invalid' });
    });
  });
}

describe('mounts in the none sandbox', () => {
  it('links each source in (no isolation, so not read-only), and runs again over its own links', async () => {
    const src = await sources();
    const spec = await specFor("node -e \"console.log('value', require('./node_modules/pkg'))\"", {
      mounts: [{ source: src.dir, target: 'node_modules/pkg' }],
    });
    expect((await new NoneSandbox().run(spec)).output).toContain('value 42');
    expect((await new NoneSandbox().run(spec)).output).toContain('value 42');
  });
});
