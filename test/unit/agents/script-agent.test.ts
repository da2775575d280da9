import { access, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GenesisError } from '../../../src/errors/genesis-error.js';
import type { AgentRunInput } from '../../../src/agents/agent.js';
import { parseRecording, ScriptAgent } from '../../../src/agents/script/script-agent.js';
import { tempDir } from '../../helpers/temp-dir.js';

const recordingText = `
tasks:
  add:
    - say: first try, off by one
      write:
        src/add.js: "export const add = (a, b) => a + b + 1;\\n"
      exit: 0
    - say: fixed
      write:
        src/add.js: "export const add = (a, b) => a + b;\\n"
  clean:
    - delete: [old.txt, gone/]
  crash:
    - exit: 2
`;

async function workspace(): Promise<string> {
  return tempDir('genesis-script-agent-');
}

function input(ws: string, taskId: string, attempt: number, more: Partial<AgentRunInput> = {}): AgentRunInput {
  return { workspace: ws, promptFile: join(ws, '.prompt'), prompt: 'p', env: {}, timeoutMs: 5_000, taskId, attempt, ...more };
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

function recordingError(run: () => unknown): GenesisError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(GenesisError);
    expect((error as GenesisError).code).toBe('recording-invalid');
    return error as GenesisError;
  }
  throw new Error('expected the recording to be refused');
}

describe('parseRecording', () => {
  it('fills the defaults of every step', () => {
    const recording = parseRecording(recordingText, 'rec.yaml');
    expect(recording.tasks['clean']).toEqual([{ say: '', write: {}, delete: ['old.txt', 'gone/'], exit: 0, sleepMs: 0 }]);
    expect(recording.tasks['add']).toHaveLength(2);
  });

  it('names the source and the path of each problem', () => {
    const error = recordingError(() => parseRecording('tasks:\n  a: []\n  b:\n    - exit: 300\n', '.genesis/recording.yaml'));
    expect(error.message).toBe(
      [
        "Found issues in the script agent's recording .genesis/recording.yaml:",
        '  - tasks.a: Too small: expected array to have >=1 items',
        '  - tasks.b.0.exit: Too big: expected number to be <=255',
      ].join('\n'),
    );
    expect(error.hint).toMatch(/say, write, delete, exit and sleepMs/);
  });

  it('refuses an unknown step field', () => {
    expect(recordingError(() => parseRecording('tasks:\n  a:\n    - wirte: {}\n', 'rec.yaml')).message).toMatch(/tasks\.a\.0: .*wirte/);
  });

  it('refuses text that is not YAML with a recording-invalid error naming the source', () => {
    expect(recordingError(() => parseRecording('tasks: [\n a: b', 'rec.yaml')).message).toContain('rec.yaml');
  });
});

describe('ScriptAgent', () => {
  const agent = new ScriptAgent(parseRecording(recordingText, 'rec.yaml'));

  it('is labelled script', () => {
    expect(agent.label).toBe('script');
  });

  it('applies step n on attempt n', async () => {
    const ws = await workspace();
    const first = await agent.run(input(ws, 'add', 1));
    expect(first).toMatchObject({ exitCode: 0, timedOut: false, aborted: false });
    expect(first.log).toBe('script: task add attempt 1\nfirst try, off by one\nwrote src/add.js\n');
    expect(await readFile(join(ws, 'src/add.js'), 'utf8')).toBe('export const add = (a, b) => a + b + 1;\n');

    const second = await agent.run(input(ws, 'add', 2));
    expect(second.log).toContain('fixed');
    expect(await readFile(join(ws, 'src/add.js'), 'utf8')).toBe('export const add = (a, b) => a + b;\n');
  });

  it('repeats the last step on later attempts', async () => {
    const ws = await workspace();
    const result = await agent.run(input(ws, 'add', 7));
    expect(result.log).toBe('script: task add attempt 7\nfixed\nwrote src/add.js\n');
    expect(await readFile(join(ws, 'src/add.js'), 'utf8')).toBe('export const add = (a, b) => a + b;\n');
  });

  it('deletes files and directories', async () => {
    const ws = await workspace();
    await writeFile(join(ws, 'old.txt'), 'x');
    await mkdir(join(ws, 'gone/deep'), { recursive: true });
    await writeFile(join(ws, 'gone/deep/f'), 'x');
    const result = await agent.run(input(ws, 'clean', 1));
    expect(result.exitCode).toBe(0);
    expect(await exists(join(ws, 'old.txt'))).toBe(false);
    expect(await exists(join(ws, 'gone'))).toBe(false);
    expect(result.log).toContain('deleted old.txt');
  });

  it('exits with the recorded code', async () => {
    expect((await agent.run(input(await workspace(), 'crash', 1))).exitCode).toBe(2);
  });

  it('exits non-zero, saying why, for a task it has no recording of', async () => {
    const result = await agent.run(input(await workspace(), 'nope', 1));
    expect(result.exitCode).not.toBe(0);
    expect(result).toMatchObject({ timedOut: false, aborted: false });
    expect(result.log).toBe('script: no recording for task nope\n');
  });

  describe('when a recorded path leaves the workspace', () => {
    for (const path of ['../escape.txt', 'src/../../escape.txt', '/tmp/genesis-script-agent-escape.txt', '.']) {
      it(`refuses to write ${path}`, async () => {
        const parent = await workspace();
        const ws = join(parent, 'ws');
        await mkdir(ws);
        const evil = new ScriptAgent({ tasks: { t: [{ say: '', write: { [path]: 'pwned' }, delete: [], exit: 0, sleepMs: 0 }] } });
        await expect(evil.run(input(ws, 't', 1))).rejects.toThrow(
          expect.objectContaining({ name: 'GenesisError', code: 'recording-invalid', message: `recording path ${path} leaves the workspace` }),
        );
        expect(await exists(join(parent, 'escape.txt'))).toBe(false);
        expect(await exists('/tmp/genesis-script-agent-escape.txt')).toBe(false);
      });
    }

    it('refuses to delete outside the workspace', async () => {
      const parent = await workspace();
      const ws = join(parent, 'ws');
      await mkdir(ws);
      await writeFile(join(parent, 'keep.txt'), 'keep');
      const evil = new ScriptAgent({ tasks: { t: [{ say: '', write: {}, delete: ['../keep.txt'], exit: 0, sleepMs: 0 }] } });
      await expect(evil.run(input(ws, 't', 1))).rejects.toBeInstanceOf(GenesisError);
      expect(await readFile(join(parent, 'keep.txt'), 'utf8')).toBe('keep');
    });

    it('refuses a sibling directory whose name starts with the workspace name', async () => {
      const parent = await workspace();
      const ws = join(parent, 'ws');
      await mkdir(ws);
      const evil = new ScriptAgent({ tasks: { t: [{ say: '', write: { '../ws-evil/x': 'pwned' }, delete: [], exit: 0, sleepMs: 0 }] } });
      await expect(evil.run(input(ws, 't', 1))).rejects.toBeInstanceOf(GenesisError);
      expect(await exists(join(parent, 'ws-evil'))).toBe(false);
    });
  });

  describe('when a step sleeps', () => {
    const sleeper = new ScriptAgent({ tasks: { t: [{ say: '', write: {}, delete: [], exit: 0, sleepMs: 2_000 }] } });

    it('times out with exit 137 when the sleep outlasts the timeout', async () => {
      const result = await sleeper.run(input(await workspace(), 't', 1, { timeoutMs: 20 }));
      expect(result).toMatchObject({ exitCode: 137, timedOut: true, aborted: false });
      expect(result.durationMs).toBeLessThan(1_000);
    });

    it('stops at once when aborted', async () => {
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 20);
      const result = await sleeper.run(input(await workspace(), 't', 1, { signal: controller.signal }));
      expect(result).toMatchObject({ exitCode: 137, timedOut: false, aborted: true });
      expect(result.durationMs).toBeLessThan(1_000);
    });

    it('exits normally when the sleep fits in the timeout', async () => {
      const short = new ScriptAgent({ tasks: { t: [{ say: '', write: {}, delete: [], exit: 0, sleepMs: 10 }] } });
      expect(await short.run(input(await workspace(), 't', 1))).toMatchObject({ exitCode: 0, timedOut: false, aborted: false });
    });
  });
});
