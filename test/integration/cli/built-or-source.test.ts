import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, realpathSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/temp-dir.js';

const BIN = fileURLToPath(new URL('../../../bin/genesis.js', import.meta.url));
const NODE_MODULES = realpathSync(fileURLToPath(new URL('../../../node_modules', import.meta.url)));

/** A checkout in little: bin/genesis.js as shipped, a source and a build that each say which they are. */
async function checkout(): Promise<{ root: string; run: () => string; at: (path: string, seconds: number) => void }> {
  const root = await tempDir('genesis-bin-');
  for (const dir of ['bin', 'src/cli', 'dist/cli']) mkdirSync(join(root, dir), { recursive: true });
  copyFileSync(BIN, join(root, 'bin', 'genesis.js'));
  symlinkSync(NODE_MODULES, join(root, 'node_modules'));
  writeFileSync(join(root, 'package.json'), '{ "type": "module" }\n');
  writeFileSync(join(root, 'src/cli/main.ts'), "export function main(): number { process.stdout.write('source'); return 0; }\n");
  writeFileSync(join(root, 'dist/cli/main.js'), "export function main() { process.stdout.write('dist'); return 0; }\n");
  const at = (path: string, seconds: number) => utimesSync(join(root, path), seconds, seconds);
  return { root, run: () => execFileSync(process.execPath, [join(root, 'bin', 'genesis.js')], { encoding: 'utf8' }), at };
}

describe('bin/genesis.js in a checkout', () => {
  it('runs the build while it is newer than every source, and the source through tsx once any is newer', async () => {
    const { root, run, at } = await checkout();
    for (const dir of ['src', 'src/cli']) at(dir, 1_000);
    at('src/cli/main.ts', 1_000);
    at('dist/cli/main.js', 2_000);
    expect(run()).toBe('dist');
    at('src/cli/main.ts', 3_000);
    expect(run()).toBe('source');
    // A file added (or one renamed, which keeps its own time) shows in its folder's time.
    at('src/cli/main.ts', 1_000);
    writeFileSync(join(root, 'src/cli/added.ts'), 'export {};\n');
    at('src/cli/added.ts', 1_000);
    expect(run()).toBe('source');
  });

  it('runs the source when nothing is built', async () => {
    const { root, run } = await checkout();
    execFileSync('rm', ['-r', join(root, 'dist')]);
    expect(run()).toBe('source');
  });
});
