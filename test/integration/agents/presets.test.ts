import { execFileSync } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AgentRunInput } from '../../../src/agents/agent.js';
import { createCommandAgent } from '../../../src/agents/command/create-command-agent.js';
import { COPILOT_USAGE_FILE } from '../../../src/agents/command/presets/copilot.js';
import { isGenesisError } from '../../../src/errors/genesis-error.js';
import { manifestSchema } from '../../../src/manifest/schema.js';
import { tempDir } from '../../helpers/temp-dir.js';

/** Stand-ins for the real CLIs: they parse flags and print output in the real formats. */
const STANDIN_BIN = join(import.meta.dirname, '..', '..', 'fixtures', 'agents', 'bin');
const PLAN = JSON.stringify({ '*': { write: { 'src/a.js': "export const a = () => 'a';\n" } } });

/**
 * The stand-ins call no model: their endpoint is a server on this host that answers nothing useful,
 * so the model gateway has somewhere to forward to (and measures no call), and what these tests
 * read is each preset's reading of its CLI's own output, kept as `reportedUsage`.
 */
let endpoint: Server;
beforeAll(async () => {
  endpoint = createServer((_req, res) => res.writeHead(404).end());
  await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
});
afterAll(() => endpoint.close());

function config(agent: Record<string, unknown>) {
  const baseUrl = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}`;
  return manifestSchema.parse({ name: 'w', goal: { outcome: 'x' }, verify: { test: 'true' }, agent: { kind: 'command', baseUrl, ...agent } }).agent;
}

async function input(more: Partial<AgentRunInput> = {}): Promise<AgentRunInput> {
  const episodeDir = await tempDir('genesis-preset-');
  const workspace = join(episodeDir, 'ws');
  execFileSync('git', ['init', '--quiet', workspace]);
  const promptFile = join(episodeDir, 'prompt.md');
  const prompt = '# World "w": task a (attempt 1 of 3)\n\nMake module a.\n';
  await writeFile(promptFile, prompt);
  const env = { PATH: `${STANDIN_BIN}:${process.env.PATH}`, GENESIS_STANDIN_PLAN: PLAN, GENESIS_EPISODE_ID: 'e1', GENESIS_PROMPT_FILE: promptFile };
  return { workspace, promptFile, prompt, env, timeoutMs: 30_000, taskId: 'a', attempt: 1, ...more };
}

let savedSandboxFlag: string | undefined;
beforeEach(() => {
  savedSandboxFlag = process.env.IS_SANDBOX;
  // The claude stand-in refuses --dangerously-skip-permissions as root, like Claude Code itself.
  process.env.IS_SANDBOX = '1';
});
afterEach(() => {
  if (savedSandboxFlag === undefined) delete process.env.IS_SANDBOX;
  else process.env.IS_SANDBOX = savedSandboxFlag;
});

describe('the command presets, against stand-in CLIs on PATH', () => {
  const cases = [
    {
      preset: 'claude-code',
      label: 'claude-code',
      usage: { inputTokens: 12 + 3456 + 7890, outputTokens: 234, cachedTokens: 7890, costUsd: 0.0421 },
      logs: '"type":"result"',
    },
    { preset: 'codex', label: 'codex', usage: { inputTokens: 24763, outputTokens: 122, cachedTokens: 24448, costUsd: null }, logs: '"type":"turn.completed"' },
    { preset: 'aider', label: 'aider', usage: { inputTokens: 12950, outputTokens: 180, cachedTokens: 10000, costUsd: 0.01 }, logs: 'Applied edit to src/a.js' },
    {
      preset: 'opencode',
      label: 'opencode',
      usage: { inputTokens: 1200 + 3000 + 500 + 300 + 4200, outputTokens: 80 + 16 + 20, cachedTokens: 7200, costUsd: 0.0163 },
      logs: '"type":"step_finish"',
    },
    {
      preset: 'gemini',
      label: 'gemini',
      usage: { inputTokens: 24939 + 800, outputTokens: 20 + 154 + 10, cachedTokens: 21263, costUsd: null },
      logs: '"response": "Done."',
    },
    // Copilot's tokens are in the usage report it leaves in its HOME, not in its output.
    { preset: 'copilot', label: 'copilot', usage: { inputTokens: 24800, outputTokens: 310, cachedTokens: 20000, costUsd: null }, logs: '"type":"result"' },
    { preset: 'qwen-code', label: 'qwen-code', usage: { inputTokens: 18300, outputTokens: 145, cachedTokens: 12000, costUsd: null }, logs: '"type":"result"' },
  ] as const;

  for (const c of cases) {
    it(`runs ${c.preset} with the prompt, leaves its change and reads its own report of its usage from the output`, async () => {
      const agent = await createCommandAgent(config({ preset: c.preset }), 'genesis/node:20');
      const run = await input();
      const result = await agent.run(run);
      expect(result.log).toContain(c.logs);
      expect(result).toMatchObject({ exitCode: 0, timedOut: false });
      expect(agent.label).toBe(c.label);
      expect(await readFile(join(run.workspace, 'src/a.js'), 'utf8')).toBe("export const a = () => 'a';\n");
      const reported = result.reportedUsage;
      expect({ ...reported, costUsd: reported?.costUsd === null ? null : Number(reported?.costUsd.toFixed(6)) }).toEqual(c.usage);
      // What counts is what the gateway measured: the stand-in called no model.
      expect(result).toMatchObject({ usageSource: 'wire', modelCalls: 0, usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 } });
    });
  }

  it('passes agent.model to the CLI and names it in the label', async () => {
    const agent = await createCommandAgent(config({ preset: 'aider', model: 'gpt-4.1' }), 'genesis/node:20');
    const result = await agent.run(await input());
    expect(agent.label).toBe('aider:gpt-4.1');
    expect(result.log).toContain('Main model: gpt-4.1 with diff edit format');
  });

  it('prices the tokens of an agent that reports no cost from the price table, for a known model', async () => {
    const agent = await createCommandAgent(config({ preset: 'codex', model: 'gpt-4.1' }), 'genesis/node:20');
    const result = await agent.run(await input());
    // (315 uncached × $2 + 24448 cached × $0.50 + 122 out × $8) per million
    expect(result.reportedUsage?.costUsd).toBeCloseTo(0.01383, 6);
  });

  it('cannot make spent tokens free by printing a cost of 0: unknown without a price, priced by agent.price', async () => {
    const step = JSON.stringify({
      type: 'step_finish',
      part: { tokens: { input: 1_000_000, output: 1000, reasoning: 0, cache: { read: 0, write: 0 } }, cost: 0 },
    });
    const command = ['sh', '-c', `printf '%s\\n' '${step}'; echo changed > f.txt`];
    const unpriced = await createCommandAgent(config({ preset: 'opencode', command }), 'genesis/node:20');
    expect((await unpriced.run(await input())).reportedUsage).toEqual({ inputTokens: 1_000_000, outputTokens: 1000, cachedTokens: 0, costUsd: null });
    const priced = await createCommandAgent(config({ preset: 'opencode', command, price: { inputPerMTok: 1, outputPerMTok: 10 } }), 'genesis/node:20');
    expect((await priced.run(await input())).reportedUsage?.costUsd).toBe(1.01);
  });

  it('appends agent.args to the preset command, where a wrong flag fails like the real CLI', async () => {
    const agent = await createCommandAgent(config({ preset: 'claude-code', args: ['--no-such-flag'] }), 'genesis/node:20');
    const result = await agent.run(await input());
    expect(result.exitCode).toBe(2);
    expect(result.log).toContain("claude: error: unknown option '--no-such-flag'");
    expect(result.reportedUsage).toBeUndefined();
  });

  it("keeps the agent's own report unknown, not 0, when it prints none", async () => {
    const agent = await createCommandAgent(config({ preset: 'codex', args: [] }), 'genesis/node:20');
    const plan = JSON.stringify({ codex: { write: { 'x.txt': 'x' }, exit: 1 } });
    const run = await input();
    const result = await agent.run({ ...run, env: { ...run.env, GENESIS_STANDIN_PLAN: plan } });
    expect(result.exitCode).toBe(1);
    expect(result.log).toContain('"type":"turn.failed"');
    expect(result.reportedUsage).toBeUndefined();
  });

  it('passes the variables a preset names through, its key as a stand-in, and no others', async () => {
    process.env.ANTHROPIC_API_KEY = 'sk-ant-test';
    process.env.GENESIS_TEST_UNLISTED = 'secret';
    try {
      const agent = await createCommandAgent(
        config({ preset: 'claude-code', command: ['sh', '-c', 'echo "key=$ANTHROPIC_API_KEY unlisted=${GENESIS_TEST_UNLISTED:-none}"; echo changed > f.txt'] }),
        'genesis/node:20',
      );
      const result = await agent.run(await input());
      expect(result.log).toMatch(/key=genesis-stand-in-\S+ unlisted=none/);
      expect(result.log).not.toContain('sk-ant-test');
    } finally {
      delete process.env.ANTHROPIC_API_KEY;
      delete process.env.GENESIS_TEST_UNLISTED;
    }
  });

  it('fails like Claude Code when asked to skip permissions as root without IS_SANDBOX, unconfined', async () => {
    if (process.getuid?.() !== 0) return;
    delete process.env.IS_SANDBOX;
    const agent = await createCommandAgent(config({ preset: 'claude-code', sandbox: 'none' }), 'genesis/node:20');
    const result = await agent.run(await input());
    expect(result.exitCode).toBe(1);
    expect(result.log).toContain('cannot be used with root/sudo privileges');
  });

  it('runs Claude Code without IS_SANDBOX in the default sandbox, where it is not root', async () => {
    delete process.env.IS_SANDBOX;
    const agent = await createCommandAgent(config({ preset: 'claude-code' }), 'genesis/node:20');
    const run = await input();
    const result = await agent.run(run);
    expect(result).toMatchObject({ exitCode: 0, timedOut: false });
    expect(await readFile(join(run.workspace, 'src/a.js'), 'utf8')).toBe("export const a = () => 'a';\n");
  });

  it("gets the HOME files agent.homeFiles names, read-only, in the default sandbox, and nothing else of the host's HOME", async () => {
    const dir = `.genesis-homefiles-${process.pid}-${Date.now()}`;
    const hostDir = join(homedir(), dir);
    await mkdir(hostDir, { recursive: true });
    await writeFile(join(hostDir, 'auth.json'), '{"token":"from-host"}\n');
    await writeFile(join(hostDir, 'other.json'), 'unnamed\n');
    try {
      const probe = `cat "$HOME/${dir}/auth.json"; echo x >> "$HOME/${dir}/auth.json" 2>/dev/null && echo auth=writable || echo auth=readonly; test -e "$HOME/${dir}/other.json" && echo other=visible || echo other=hidden; echo changed > f.txt`;
      const agent = await createCommandAgent(config({ preset: 'codex', command: ['sh', '-c', probe], homeFiles: [`${dir}/auth.json`] }), 'genesis/node:20');
      const result = await agent.run(await input());
      expect(result.log).toContain('{"token":"from-host"}');
      expect(result.log).toContain('auth=readonly');
      expect(result.log).toContain('other=hidden');
      expect(await readFile(join(hostDir, 'auth.json'), 'utf8')).toBe('{"token":"from-host"}\n');
    } finally {
      await rm(hostDir, { recursive: true, force: true });
    }
  });

  it("reads Copilot's usage report from its private HOME, and never a host file or a FIFO the agent put in its place", async () => {
    const report = await readFile(join(import.meta.dirname, '..', '..', 'fixtures', 'agents', 'outputs', 'copilot-usage.json'), 'utf8');
    // A file only this process may read: the agent cannot, and must not get Genesis to read it for it.
    const hostSecret = join(await tempDir('genesis-host-secret-'), 'report.json');
    await writeFile(hostSecret, report, { mode: 0o600 });
    const usageOf = async (script: string) => {
      const agent = await createCommandAgent(config({ preset: 'copilot', command: ['sh', '-c', `${script}; echo changed > f.txt`] }), 'genesis/node:20');
      const run = await input();
      const result = await agent.run({ ...run, env: { ...run.env, REPORT: report } });
      expect(result).toMatchObject({ exitCode: 0, timedOut: false });
      return result.reportedUsage;
    };
    expect(await usageOf(`printf '%s' "$REPORT" > "$HOME/${COPILOT_USAGE_FILE}"`)).toEqual({
      inputTokens: 1000,
      outputTokens: 20,
      cachedTokens: 400,
      costUsd: null,
    });
    expect(await usageOf(`ln -s ${hostSecret} "$HOME/${COPILOT_USAGE_FILE}"`)).toBeUndefined();
    expect(await usageOf(`mkfifo "$HOME/${COPILOT_USAGE_FILE}"`)).toBeUndefined();
  });

  it('fails with a non-retryable agent-not-found naming the preset and how to install it when the binary is missing', async () => {
    const agent = await createCommandAgent(config({ preset: 'gemini' }), 'genesis/node:20');
    const run = await input();
    const error = await agent.run({ ...run, env: { ...run.env, PATH: '/usr/bin:/bin' } }).catch((e: unknown) => e);
    expect(isGenesisError(error)).toBe(true);
    expect(error).toMatchObject({ code: 'agent-not-found', retryable: false, message: 'the agent command "gemini" was not found (agent gemini)' });
    expect((error as { hint: string }).hint).toContain('npm install -g @google/gemini-cli');
  });
});
