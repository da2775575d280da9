import { execFile } from 'node:child_process';
import { access, mkdir, readFile, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The table of pinned CLIs (npm specs, one a line), shared with the agent image: a version bump is one line there. */
const TABLE = join(import.meta.dirname, '..', '..', 'sandboxes', 'agent', 'clis.txt');

export type AgentCliName = 'claude-code' | 'codex' | 'gemini' | 'opencode' | 'copilot' | 'qwen-code';

const PACKAGES: Readonly<Record<AgentCliName, { pkg: string; bin: string }>> = {
  'claude-code': { pkg: '@anthropic-ai/claude-code', bin: 'claude' },
  codex: { pkg: '@openai/codex', bin: 'codex' },
  gemini: { pkg: '@google/gemini-cli', bin: 'gemini' },
  opencode: { pkg: 'opencode-ai', bin: 'opencode' },
  copilot: { pkg: '@github/copilot', bin: 'copilot' },
  'qwen-code': { pkg: '@qwen-code/qwen-code', bin: 'qwen' },
};

/** The pinned npm spec of each CLI, from the table (`@openai/codex@0.171.0`). */
export async function pinnedSpecs(): Promise<Record<AgentCliName, string>> {
  const lines = (await readFile(TABLE, 'utf8'))
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const specs = {} as Record<AgentCliName, string>;
  for (const [name, { pkg }] of Object.entries(PACKAGES) as Array<[AgentCliName, { pkg: string }]>) {
    const spec = lines.find((l) => l.startsWith(`${pkg}@`));
    if (!spec) throw new Error(`${TABLE} pins no version of ${pkg}`);
    specs[name] = spec;
  }
  return specs;
}

function cacheRoot(): string {
  return process.env.GENESIS_TEST_CACHE ? join(process.env.GENESIS_TEST_CACHE, 'agent-clis') : join(homedir(), '.cache', 'genesis', 'agent-clis');
}

/**
 * The bin directory of the pinned CLI, installed from the npm registry into the cache once
 * (`npm install -g --prefix`, so a native binary sits nested in its package), under a lock so that
 * test files running at once do not race: the first installs, the others wait and reuse it.
 */
export async function installAgentCli(name: AgentCliName): Promise<{ binDir: string; bin: string; version: string; spec: string }> {
  const spec = (await pinnedSpecs())[name];
  const version = spec.slice(spec.lastIndexOf('@') + 1);
  const root = cacheRoot();
  const dir = join(root, spec.replaceAll('/', '+'));
  const binDir = join(dir, 'bin');
  const bin = join(binDir, PACKAGES[name].bin);
  const ready = () =>
    access(bin).then(
      () => true,
      () => false,
    );
  if (!(await ready())) {
    await mkdir(root, { recursive: true });
    const script = [
      'set -e',
      `test -x "$1/bin/${PACKAGES[name].bin}" && exit 0`,
      'rm -rf "$1.partial"',
      'npm install -g --prefix "$1.partial" --no-audit --no-fund --loglevel=error "$2" >&2',
      'mv "$1.partial" "$1"',
    ].join('\n');
    // flock: one installer per CLI at a time across processes; the loser finds it installed.
    await run('flock', [join(root, `.${spec.replaceAll('/', '+')}.lock`), 'bash', '-c', script, 'install', dir, spec], { timeout: 30 * 60_000 }).catch(
      async (error: unknown) => {
        await rm(`${dir}.partial`, { recursive: true, force: true });
        throw error;
      },
    );
    if (!(await ready())) throw new Error(`installing ${spec} left no ${bin}`);
  }
  return { binDir, bin, version, spec };
}
