import { execFileSync, spawnSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { itWith } from '../../helpers/services.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { genesis } from '../../helpers/genesis-cli.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const BIN = join(ROOT, 'bin/genesis.js');
// PATH without any `genesis` of another install, so the fallback is what this test sees.
const PATH = (process.env.PATH ?? '')
  .split(':')
  .filter((dir) => spawnSync('test', ['-e', join(dir, 'genesis')]).status !== 0)
  .join(':');

function examplesOf(help: string): string[] {
  const at = help.indexOf('\nExamples');
  expect(at, help).toBeGreaterThan(0);
  return help
    .slice(at)
    .split('\n')
    .slice(2)
    .filter((line) => line.startsWith('  '))
    .map((line) => line.trim());
}

describe('the command line as printed', () => {
  itWith('docker')(
    'runs every --help example as printed, in order, without genesis on PATH',
    async () => {
      const cwd = await tempDir('genesis-examples-');
      const help = await genesis(['--help'], { cwd, env: { PATH } });
      const examples = examplesOf(help.stdout);
      expect(examples.length).toBeGreaterThanOrEqual(6);
      expect(examples.filter((e) => !e.startsWith('git ')).every((e) => e.startsWith(`node ${BIN} `))).toBe(true);
      for (const line of examples) {
        const r = spawnSync('sh', ['-c', line], { cwd, env: { ...process.env, PATH }, encoding: 'utf8', timeout: 300_000 });
        expect(r.status, `${line}\n${r.stdout}\n${r.stderr}`).toBe(0);
      }
    },
    600_000,
  );

  it('prints plain genesis in hints and examples once the checkout is installed globally, and that command works', async () => {
    const prefix = await tempDir('genesis-prefix-');
    execFileSync('npm', ['install', '-g', '--prefix', prefix, '--no-audit', '--no-fund', '--offline', ROOT], { stdio: 'ignore' });
    const env = { PATH: `${join(prefix, 'bin')}:${PATH}` };
    const help = await genesis(['--help'], { env });
    expect(examplesOf(help.stdout)[0]).toMatch(/^genesis init --world calc\.world --from /);
    const missing = await genesis(['log', '--world', '/nonexistent/w.world'], { env });
    expect(missing.stderr).toContain('what to do: create one with: genesis init --world /nonexistent/w.world');
    const installed = spawnSync('genesis', ['model', 'horizon', '--p', '0.99', '--json'], { env: { ...process.env, ...env }, encoding: 'utf8' });
    expect(installed.status, installed.stderr).toBe(0);
    expect(JSON.parse(installed.stdout)).toBeTruthy();
  }, 120_000);

  it('prints hints with the command GENESIS_CLI_NAME gives, as docker-compose.yml sets it for its containers', async () => {
    const compose = await readFile(join(ROOT, 'docker-compose.yml'), 'utf8');
    const name = /GENESIS_CLI_NAME: (.+)/.exec(compose)?.[1]?.trim();
    expect(name).toBe('docker compose run --rm scheduler');
    const missing = await genesis(['log', '--world', '/nonexistent/w.world'], { env: { PATH, GENESIS_CLI_NAME: name! } });
    expect(missing.stderr).toContain('what to do: create one with: docker compose run --rm scheduler init --world /nonexistent/w.world');
  });

  it('prints hints with the path to this bin when genesis is not on PATH', async () => {
    // From another directory the path is absolute; from the checkout it is bin/genesis.js: both run from where they are printed.
    const elsewhere = await genesis(['log', '--world', '/nonexistent/w.world'], { env: { PATH }, cwd: await tempDir('genesis-cwd-') });
    expect(elsewhere.status).toBe(1);
    expect(elsewhere.stderr).toContain(`what to do: create one with: node ${BIN} init --world /nonexistent/w.world`);
    const here = await genesis(['log', '--world', '/nonexistent/w.world'], { env: { PATH }, cwd: ROOT });
    expect(here.stderr).toContain('what to do: create one with: node bin/genesis.js init --world /nonexistent/w.world');
  });

  it('has a package name of its own, so npx and npm install cannot pick up the unrelated "genesis" package', async () => {
    const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { name: string; bin: Record<string, string> };
    expect(pkg.name).toBe('genesis-orchestrator');
    expect(pkg.bin).toEqual({ genesis: 'bin/genesis.js' });
    expect(await readFile(join(ROOT, 'README.md'), 'utf8')).not.toMatch(/npx genesis/);
  });
});
