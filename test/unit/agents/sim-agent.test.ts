import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SimAgent } from '../../../src/agents/sim/sim-agent.js';
import { drawSimAttempt } from '../../../src/agents/sim/draw.js';
import { tempDir } from '../../helpers/temp-dir.js';

async function attempt(agent: SimAgent, taskId: string, n: number, workspace?: string) {
  const dir = workspace ?? (await tempDir('genesis-sim-agent-'));
  const result = await agent.run({ workspace: dir, promptFile: join(dir, 'prompt.md'), prompt: '', env: {}, timeoutMs: 1000, taskId, attempt: n });
  return { dir, result };
}

describe('SimAgent', () => {
  it('writes the right answer to its step file when it draws no error', async () => {
    const { dir, result } = await attempt(new SimAgent({ e: 0, w: 0, d: 0, seed: 1 }), 't01', 1);
    expect(result).toMatchObject({ exitCode: 0, timedOut: false, aborted: false });
    expect(await readFile(join(dir, 'steps/t01.txt'), 'utf8')).toBe('answer: 1\nnote: written by the sim agent, seed 1, attempt 1\n');
  });

  it("builds on the previous step's answer as it finds it in the workspace, even a wrong one", async () => {
    const dir = await tempDir('genesis-sim-agent-');
    await mkdir(join(dir, 'steps'));
    await writeFile(join(dir, 'steps/t02.txt'), 'answer: 13\n');
    await attempt(new SimAgent({ e: 0, w: 0, d: 0, seed: 1 }), 't03', 1, dir);
    expect(await readFile(join(dir, 'steps/t03.txt'), 'utf8')).toMatch(/^answer: 16\n/);
  });

  it('exits 1 and writes nothing on a visible error', async () => {
    const { dir, result } = await attempt(new SimAgent({ e: 1, w: 0, d: 0, seed: 1 }), 't01', 1);
    expect(result.exitCode).toBe(1);
    expect(result.log).toContain('simulated crash');
    expect(await readdir(dir)).toEqual([]);
  });

  it('writes the wrong answer its seeded draw names, and says so in its log', async () => {
    const agent = new SimAgent({ e: 0, w: 1, d: 0.5, seed: 5 });
    const { dir, result } = await attempt(agent, 't01', 4);
    const draw = drawSimAttempt({ e: 0, w: 1, d: 0.5, seed: 5 }, 't01', 4);
    expect(await readFile(join(dir, 'steps/t01.txt'), 'utf8')).toMatch(new RegExp(`^answer: ${1 + draw.offset}\n`));
    expect(result.log).toContain(`(${draw.outcome})`);
  });

  it('exits 2 on a task that is not a sim-chain step', async () => {
    const { result } = await attempt(new SimAgent({ e: 0, w: 0, d: 0, seed: 1 }), 'build-parser', 1);
    expect(result.exitCode).toBe(2);
    expect(result.log).toContain('not a sim-chain step');
  });

  it('names its rates in its label, which the ledger and the commit trailers carry', () => {
    expect(new SimAgent({ e: 0.1, w: 0.05, d: 0.8, seed: 3 }).label).toBe('sim:e=0.1,w=0.05,d=0.8,seed=3');
  });
});
