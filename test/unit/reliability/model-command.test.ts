import { Command } from 'commander';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { define } from '../../../src/cli/commands/model/model.js';
import { GenesisError } from '../../../src/errors/genesis-error.js';

let output = '';

beforeEach(() => {
  output = '';
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    output += String(chunk);
    return true;
  });
});

afterEach(() => {
  vi.restoreAllMocks();
});

async function genesis(...args: string[]): Promise<string> {
  const program = new Command('genesis').exitOverride();
  define(program);
  await program.parseAsync(['node', 'genesis', ...args]);
  return output;
}

describe('genesis model chain', () => {
  it("prints the issue's step and lengths as JSON, with the simulation beside them", async () => {
    const json = JSON.parse(
      await genesis(
        'model',
        'chain',
        '--e',
        '0.05',
        '--w',
        '0.03',
        '--attempts',
        '3',
        '--recall',
        '0.8',
        '--false-reject',
        '0.05',
        '--steps',
        '10,30',
        '--simulate',
        '2000',
        '--seed',
        '7',
        '--json',
      ),
    ) as Record<string, any>;
    expect(json.step).toEqual({ retry: 0.12, correct: 0.9914656, silentlyWrong: 0.0068064, givesUp: 0.001728, attempts: 1.1344, rounds: 1.1344 });
    expect(json.lengths).toHaveLength(2);
    expect(json.lengths[0]).toMatchObject({ steps: 10, success: expect.closeTo(0.9179, 4), expectedAttempts: expect.closeTo(11.256, 3) });
    expect(json.lengths[0].simulated).toEqual({
      runs: 2000,
      seed: 7,
      success: expect.any(Number),
      low: expect.any(Number),
      high: expect.any(Number),
      meanAttempts: expect.any(Number),
      attemptsLow: expect.any(Number),
      attemptsHigh: expect.any(Number),
    });
    expect(json.lengths[0].simulated.low).toBeLessThan(json.lengths[0].success);
    expect(json.lengths[0].simulated.high).toBeGreaterThan(json.lengths[0].success);
    expect(json.lengths[1].steps).toBe(30);
  });

  it('leaves the simulation out unless asked for it', async () => {
    const json = JSON.parse(await genesis('model', 'chain', '--steps', '5', '--json')) as Record<string, any>;
    expect(json.lengths).toEqual([{ steps: 5, success: expect.closeTo(0.92 ** 5, 10), expectedAttempts: expect.any(Number) }]);
    expect(json.model).toEqual({ e: 0.05, w: 0.03, c: 0.92, recall: 0, falseReject: 0, attempts: 1, race: 1 });
  });

  it('prints tables and an ASCII chart without --json', async () => {
    const text = await genesis('model', 'chain', '--attempts', '3', '--steps', '10,30', '--simulate', '500', '--chart');
    expect(text).toContain('retry  correct  silently wrong  gives up  attempts');
    expect(text).toMatch(/^10 +72\.46% +10\.519 +/m);
    expect(text).toContain('chain length (steps)');
    expect(text).toContain('o simulated');
  });

  it('lets an invalid rate through to the top-level catch as a GenesisError', async () => {
    const attempt = genesis('model', 'chain', '--e', '0.6', '--w', '0.5');
    await expect(attempt).rejects.toBeInstanceOf(GenesisError);
    await expect(genesis('model', 'chain', '--e', '0.6', '--w', '0.5')).rejects.toThrow(/^e \+ w must be at most 1/);
    await expect(genesis('model', 'chain', '--e', 'lots')).rejects.toMatchObject({
      code: 'invalid-model-input',
      message: '--e expects a number, got "lots"',
    });
    await expect(genesis('model', 'chain', '--attempts', '0')).rejects.toThrow('attempts must be an integer >= 1, got 0');
  });
});

describe('genesis model horizon', () => {
  it("prints the issue's p_eff and horizons as JSON", async () => {
    const json = JSON.parse(await genesis('model', 'horizon', '--p', '0.99', '--attempts', '3', '--deterministic', '0.25', '--json')) as Record<string, any>;
    expect(json.pEff).toBe(0.99749925);
    expect(json.horizons).toEqual([
      { threshold: 0.5, steps: expect.closeTo(276.83, 2), wholeSteps: 276 },
      { threshold: 0.8, steps: expect.closeTo(89.12, 2), wholeSteps: 89 },
      { threshold: 0.95, steps: expect.closeTo(20.49, 2), wholeSteps: 20 },
    ]);
  });

  it('prints an infinite horizon as null when nothing ever fails', async () => {
    const json = JSON.parse(await genesis('model', 'horizon', '--p', '1', '--threshold', '0.5', '--json')) as Record<string, any>;
    expect(json.horizons).toEqual([{ threshold: 0.5, steps: null, wholeSteps: null }]);
  });

  it('prints a table without --json', async () => {
    const text = await genesis('model', 'horizon', '--p', '0.99', '--attempts', '3', '--deterministic', '0.25');
    expect(text).toContain('p_eff = 0.99749925');
    expect(text).toMatch(/^50\.00% +276\.83 +276$/m);
  });

  it('rejects a threshold of 1', async () => {
    await expect(genesis('model', 'horizon', '--threshold', '0.5,1')).rejects.toThrow('threshold (success threshold) must be in (0, 1), exclusive, got 1');
  });
});

describe('genesis model --help', () => {
  it('describes every option with its default', () => {
    const program = new Command('genesis').exitOverride();
    define(program);
    const model = program.commands.find((command) => command.name() === 'model');
    for (const command of model?.commands ?? []) {
      for (const option of command.options) {
        expect(option.description, option.flags).not.toBe('');
        expect(option.defaultValue, option.flags).not.toBeUndefined();
      }
    }
    const chain = model?.commands.find((command) => command.name() === 'chain');
    // Commander wraps help to the terminal's width.
    const help = chain?.helpInformation().replace(/\s+/g, ' ');
    expect(help).toContain('(default: 10,30)');
    expect(help).toContain('(default: 0.05)');
  });
});

describe('genesis model pipeline', () => {
  it('hands every flag to the simulation and prints its result as JSON', async () => {
    const args = [
      '--workers',
      '8',
      '--agent-min',
      '2',
      '--gate-min',
      '3',
      '--tasks',
      '40',
      '--seed',
      '3',
      '--start-s',
      '0',
      '--overhead-s',
      '0',
      '--build-s',
      '0',
      '--land-s',
      '0',
    ];
    const plain = JSON.parse(await genesis('model', 'pipeline', ...args, '--json')) as Record<string, number>;
    expect(plain).toMatchObject({ accepted: 40, rejected: 0, ceilingMin: 25 });
    output = '';
    const onBase = JSON.parse(await genesis('model', 'pipeline', ...args, '--gate-on-base', '--json')) as Record<string, number>;
    expect(onBase.gatesPerAccepted).toBeGreaterThan(plain.gatesPerAccepted!);
    output = '';
    const slowLand = JSON.parse(await genesis('model', 'pipeline', ...args.slice(0, -2), '--land-s', '60', '--json')) as Record<string, number>;
    // Forty landings of a minute each, one at a time.
    expect(slowLand.makespanMin).toBeGreaterThanOrEqual(40);
  });

  it('says in words what lands, how fast, and what it costs in gates', async () => {
    const text = await genesis('model', 'pipeline', '--workers', '4', '--tasks', '20');
    expect(text).toMatch(/^20 changes landed in [\d.]+ min: [\d.]+ per hour$/m);
    expect(text).toMatch(/^ceiling \(no integration cost\): 75\.0 min; efficiency [\d.]+$/m);
    expect(text).toMatch(/gates per accepted change: [\d.]+ \(\d+ verifications on speculative tips\)/);
  });

  it('refuses bad input naming the flag', async () => {
    await expect(genesis('model', 'pipeline', '--verify-reject', '1')).rejects.toThrow(/--verify-reject expects a probability in \[0, 1\)/);
    await expect(genesis('model', 'pipeline', '--land-s', '-1')).rejects.toThrow(/--land-s expects seconds/);
    await expect(genesis('model', 'pipeline', '--failed-gate-factor', '0.5')).rejects.toThrow(/--failed-gate-factor expects a multiple of at least 1/);
    await expect(genesis('model', 'pipeline', '--workers', '2.5')).rejects.toThrow(/--workers expects a whole number/);
  });
});
