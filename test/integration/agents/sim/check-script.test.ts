import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { SIM_CHECK_SCRIPT } from '../../../../src/agents/sim/check-script.js';
import { formatSimNote, formatSimStep, simStepPath } from '../../../../src/agents/sim/chain.js';
import { createRng } from '../../../../src/reliability/index.js';
import { itWith } from '../../../helpers/services.js';
import { tempDir } from '../../../helpers/temp-dir.js';
import { bwrapSandbox } from './sim-fixture.js';

const LIMITS = { cpus: 1, memoryMb: 256, pids: 128 };

describe('checks/steps.sh, the visible test of a sim-chain world', () => {
  itWith('bwrap')('judges every step file in the sandbox exactly as the replay assumes: last digit, then the brittle hash against f', async () => {
    const dir = await tempDir('genesis-sim-check-');
    await mkdir(join(dir, 'checks'));
    await writeFile(join(dir, 'checks/steps.sh'), SIM_CHECK_SCRIPT);
    const rng = createRng(2024);
    const f = 0.3;
    const expected: string[] = [];
    let previous = 0;
    for (let step = 1; step <= 40; step += 1) {
      // Right, off by a multiple of 10 (missed), or off by 1..9 (caught), in equal parts.
      const kind = rng.nextInt(3);
      const answer = previous + step + (kind === 0 ? 0 : kind === 1 ? 10 * (1 + rng.nextInt(9)) : 1 + rng.nextInt(9));
      const content = formatSimStep(answer, formatSimNote(2024, 1 + rng.nextInt(3)));
      await mkdir(join(dir, 'steps'), { recursive: true });
      await writeFile(join(dir, simStepPath(step)), content);
      const hash = Number.parseInt(createHash('sha256').update(content).digest('hex').slice(0, 8), 16);
      expected.push(`${kind === 2 ? 'not ok' : 'ok'} - t${String(step).padStart(2, '0')} last digit`);
      expected.push(`${hash < f * 2 ** 32 ? 'not ok' : 'ok'} - t${String(step).padStart(2, '0')} brittle`);
      previous = answer;
    }
    const sandbox = await bwrapSandbox();
    const result = await sandbox.run({ command: `sh checks/steps.sh ${f}`, workDir: dir, timeoutMs: 30_000, limits: LIMITS });
    const points = result.output
      .split('\n')
      .filter((l) => /^(not )?ok /.test(l))
      .map((l) => l.replace(/ \d+ - /, ' - '));
    expect(points).toEqual(expected);
    expect(expected.some((p) => p.startsWith('not ok') && p.endsWith('brittle'))).toBe(true);
    expect(result.exitCode).toBe(1);
  });

  itWith('bwrap')('passes a tree without step files, so a new world passes its own gate', async () => {
    const dir = await tempDir('genesis-sim-check-');
    await mkdir(join(dir, 'checks'));
    await writeFile(join(dir, 'checks/steps.sh'), SIM_CHECK_SCRIPT);
    const result = await (await bwrapSandbox()).run({ command: 'sh checks/steps.sh 0.5', workDir: dir, timeoutMs: 30_000, limits: LIMITS });
    expect(result).toMatchObject({ exitCode: 0 });
    expect(result.output).toContain('1..0');
  });

  itWith('bwrap')('rejects a step file without an answer line', async () => {
    const dir = await tempDir('genesis-sim-check-');
    await mkdir(join(dir, 'checks'));
    await mkdir(join(dir, 'steps'));
    await writeFile(join(dir, 'checks/steps.sh'), SIM_CHECK_SCRIPT);
    await writeFile(join(dir, 'steps/t01.txt'), 'the answer is 1\n');
    const result = await (await bwrapSandbox()).run({ command: 'sh checks/steps.sh 0', workDir: dir, timeoutMs: 30_000, limits: LIMITS });
    expect(result.exitCode).toBe(1);
    expect(result.output).toContain('not ok 1 - t01 answer');
  });
});
