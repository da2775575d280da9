import { execFile } from 'node:child_process';
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/temp-dir.js';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../../..');
const KNIP = join(ROOT, 'node_modules/.bin/knip');

/** Runs knip with the repository's own knip.json over a small project of `files`, as `npm run lint` does. */
async function knip(files: Record<string, string>): Promise<{ code: number; stdout: string }> {
  const dir = await tempDir('genesis-knip-');
  await copyFile(join(ROOT, 'knip.json'), join(dir, 'knip.json'));
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'knip-fixture', type: 'module', private: true }));
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  return run(KNIP, ['--reporter', 'compact', '--no-progress'], { cwd: dir }).then(
    (ok) => ({ code: 0, stdout: ok.stdout }),
    (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout }),
  );
}

const MAIN = "import { used } from '../world/tasks.js';\nexport function main(): number {\n  return used();\n}\n";

describe('the unused-export check', () => {
  it('names an export that no other module imports, and passes once it is gone', async () => {
    const dead = await knip({
      'src/cli/main.ts': MAIN,
      'src/world/tasks.ts': 'export function used(): number {\n  return 1;\n}\nexport function dead(): number {\n  return 2;\n}\n',
    });
    expect(dead.code).not.toBe(0);
    expect(dead.stdout).toContain('Unused exports (1)');
    expect(dead.stdout).toContain('src/world/tasks.ts: dead');

    const clean = await knip({ 'src/cli/main.ts': MAIN, 'src/world/tasks.ts': 'export function used(): number {\n  return 1;\n}\n' });
    expect(clean).toEqual({ code: 0, stdout: '' });
  });

  it('names a module nothing imports', async () => {
    const result = await knip({
      'src/cli/main.ts': MAIN,
      'src/world/tasks.ts': 'export function used(): number {\n  return 1;\n}\n',
      'src/world/orphan.ts': 'export const orphan = 1;\n',
    });
    expect(result.code).not.toBe(0);
    expect(result.stdout).toContain('Unused files (1)');
    expect(result.stdout).toContain('src/world/orphan.ts');
  });
});
