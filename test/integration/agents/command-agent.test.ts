import { readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CommandAgent } from '../../../src/agents/command/command-agent.js';
import { isGenesisError } from '../../../src/errors/genesis-error.js';
import { tempDir } from '../../helpers/temp-dir.js';

async function input(overrides: Partial<Parameters<CommandAgent['run']>[0]> = {}) {
  const workspace = await tempDir();
  const promptFile = join(await tempDir(), 'prompt.md');
  await writeFile(promptFile, 'do the thing\n');
  return {
    workspace,
    promptFile,
    prompt: 'do the thing\n',
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      GENESIS_TASK_ID: 't1',
      GENESIS_ATTEMPT: '2',
      GENESIS_EPISODE_ID: 'e1',
      GENESIS_WORLD_NAME: 'w',
      GENESIS_PROMPT_FILE: promptFile,
    },
    timeoutMs: 10_000,
    taskId: 't1',
    attempt: 2,
    ...overrides,
  };
}

/** Running or sleeping; a zombie waiting for its reaper counts as gone. */
const alive = (pid: number) => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) Z/.test(stat);
  } catch {
    return false;
  }
};

describe('the command agent', () => {
  it('runs in the workspace with the prompt on stdin, in a file, and the GENESIS_ variables', async () => {
    const run = await input();
    const script =
      'cat > from-stdin.txt; cp "$GENESIS_PROMPT_FILE" from-file.txt; echo "$GENESIS_TASK_ID $GENESIS_ATTEMPT $GENESIS_EPISODE_ID $GENESIS_WORLD_NAME" > env.txt; echo "{promptFile}" > argv.txt';
    const result = await new CommandAgent(['sh', '-c', script]).run(run);
    expect(result).toMatchObject({ exitCode: 0, timedOut: false });
    expect(await readFile(join(run.workspace, 'from-stdin.txt'), 'utf8')).toBe('do the thing\n');
    expect(await readFile(join(run.workspace, 'from-file.txt'), 'utf8')).toBe('do the thing\n');
    expect(await readFile(join(run.workspace, 'env.txt'), 'utf8')).toBe('t1 2 e1 w\n');
    expect((await readFile(join(run.workspace, 'argv.txt'), 'utf8')).trim()).toBe(run.promptFile);
  });

  it('sees only the environment it is given', async () => {
    process.env.GENESIS_TEST_SECRET = 'leak';
    const run = await input();
    const result = await new CommandAgent(['sh', '-c', 'echo "secret=${GENESIS_TEST_SECRET:-none}"']).run(run);
    delete process.env.GENESIS_TEST_SECRET;
    expect(result.log).toContain('secret=none');
  });

  it('reports a non-zero exit with its log', async () => {
    const result = await new CommandAgent(['sh', '-c', 'echo trying; echo broken >&2; exit 7']).run(await input());
    expect(result.exitCode).toBe(7);
    expect(result.log).toContain('trying');
    expect(result.log).toContain('broken');
  });

  it('kills the whole process tree at the timeout', async () => {
    const run = await input({ timeoutMs: 500 });
    const started = Date.now();
    const result = await new CommandAgent(['sh', '-c', 'sleep 60 & echo $! > child.pid; sleep 60']).run(run);
    expect(result.timedOut).toBe(true);
    expect(Date.now() - started).toBeLessThan(5_000);
    const child = Number(await readFile(join(run.workspace, 'child.pid'), 'utf8'));
    await new Promise((r) => setTimeout(r, 200));
    expect(alive(child)).toBe(false);
  });

  it('leaves no process of its group running after it exits', async () => {
    const run = await input();
    const result = await new CommandAgent(['sh', '-c', '(sleep 60 & echo $! > daemon.pid) ; exit 0']).run(run);
    expect(result.exitCode).toBe(0);
    const daemon = Number(await readFile(join(run.workspace, 'daemon.pid'), 'utf8'));
    await new Promise((r) => setTimeout(r, 200));
    expect(alive(daemon)).toBe(false);
  });

  it('stops when the episode is aborted', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const result = await new CommandAgent(['sleep', '60']).run(await input({ signal: controller.signal }));
    expect(result.aborted).toBe(true);
  });

  it('stops at once when the episode was aborted before the agent started', async () => {
    const controller = new AbortController();
    controller.abort();
    const result = await new CommandAgent(['sleep', '60']).run(await input({ signal: controller.signal, timeoutMs: 10_000 }));
    expect(result).toMatchObject({ aborted: true, timedOut: false });
    expect(result.durationMs).toBeLessThan(5_000);
  });

  it('fails with a non-retryable agent-not-found when the binary is missing', async () => {
    const error = await new CommandAgent(['genesis-no-such-agent-binary']).run(await input()).catch((e: unknown) => e);
    expect(isGenesisError(error) && error.code).toBe('agent-not-found');
    expect(isGenesisError(error) && error.retryable).toBe(false);
  });
});
