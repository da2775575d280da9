import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { createAgentSandbox } from '../../../src/sandbox/create-agent-sandbox.js';
import { CommandAgent } from '../../../src/agents/command/command-agent.js';
import { itWith } from '../../helpers/services.js';
import { tempDir } from '../../helpers/temp-dir.js';

const CODEX = '@openai/codex@0.171.0';

/**
 * A real install of Codex from the npm registry, in one of npm's two layouts, kept in a cache so
 * later runs make none: `local` (`npm install --prefix`: the native binary's package hoisted beside
 * the launcher's, `node_modules/@openai/codex-linux-x64`) or `global` (`npm install -g --prefix`:
 * nested under the launcher's package). Returns the directory of the `codex` on PATH.
 */
async function installedCodex(layout: 'local' | 'global'): Promise<string> {
  const cache = join(process.env.GENESIS_TEST_CACHE ?? join(homedir(), '.cache', 'genesis'), 'npm-layouts', `${CODEX.replace('/', '+')}-${layout}`);
  const bin = layout === 'local' ? join(cache, 'node_modules', '.bin') : join(cache, 'bin');
  if (existsSync(join(bin, 'codex'))) return bin;
  // Installed beside and renamed into place: two test processes never see half an install.
  const staging = `${cache}.${process.pid}`;
  await rm(staging, { recursive: true, force: true });
  await mkdir(staging, { recursive: true });
  execFileSync('npm', ['install', ...(layout === 'global' ? ['-g'] : []), '--no-audit', '--no-fund', '--prefix', staging, CODEX], {
    stdio: 'pipe',
    timeout: 300_000,
  });
  await rename(staging, cache).catch(async () => rm(staging, { recursive: true, force: true }));
  return bin;
}

async function runConfined(bin: string): Promise<{ exitCode: number; log: string }> {
  const sandbox = await createAgentSandbox({ kind: 'auto', image: 'genesis/node:20', network: 'genesis-agents' });
  const dir = await tempDir('genesis-npm-layout-');
  const workspace = join(dir, 'ws');
  execFileSync('git', ['init', '--quiet', workspace]);
  const promptFile = join(dir, 'prompt.md');
  await writeFile(promptFile, 'version\n');
  const env = { PATH: `${bin}:/usr/bin:/bin`, GENESIS_EPISODE_ID: 'e1' };
  return new CommandAgent(['codex', '--version'], { sandbox }).run({ workspace, promptFile, prompt: '', env, timeoutMs: 60_000, taskId: 't', attempt: 1 });
}

describe('a CLI installed with npm, run in the default agent sandbox', () => {
  itWith('bwrap')(
    'runs from a local install, whose native binary npm hoisted into a sibling package',
    async () => {
      const bin = await installedCodex('local');
      expect(existsSync(join(bin, '..', '@openai', 'codex-linux-x64', 'package.json'))).toBe(true);
      const result = await runConfined(bin);
      expect(result.log).not.toContain('Missing optional dependency');
      expect(result.exitCode, result.log).toBe(0);
      expect(result.log).toContain('codex-cli 0.171.0');
    },
    360_000,
  );

  itWith('bwrap')(
    'runs from a global install, whose native binary is nested in its package',
    async () => {
      const bin = await installedCodex('global');
      expect(existsSync(join(bin, '..', 'lib', 'node_modules', '@openai', 'codex', 'node_modules', '@openai', 'codex-linux-x64'))).toBe(true);
      const result = await runConfined(bin);
      expect(result.exitCode, result.log).toBe(0);
      expect(result.log).toContain('codex-cli 0.171.0');
    },
    360_000,
  );
});
