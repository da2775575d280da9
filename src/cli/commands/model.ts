import { Option, type Command } from 'commander';
import { GenesisError } from '../../errors.js';
import { printJson } from '../output.js';

/** Options of `genesis model chain`, as commander hands them over (numbers already parsed). */
export interface ModelChainOptions {
  e: number;
  w: number;
  attempts: number;
  recall: number;
  falseReject: number;
  steps: number[];
  simulate: number;
  seed: number;
  chart: boolean;
  json: boolean;
}

/** Options of `genesis model horizon`. */
export interface ModelHorizonOptions {
  p: number;
  attempts: number;
  deterministic: number;
  threshold: number[];
  json: boolean;
}

function parseNumber(flag: string) {
  return (text: string): number => {
    const value = text.trim() === '' ? Number.NaN : Number(text);
    if (!Number.isFinite(value)) {
      throw new GenesisError('invalid-model-input', `${flag} expects a number, got "${text}"`);
    }
    return value;
  };
}

function parseList(flag: string) {
  return (text: string): number[] => text.split(',').map((item) => parseNumber(flag)(item));
}

// Commander prints a string default with quotes and an array as JSON; the second argument of
// default() is the text --help shows instead.
function numberOption(flags: string, description: string, value: number): Option {
  const flag = flags.split(' ')[0] ?? flags;
  return new Option(flags, description).argParser(parseNumber(flag)).default(value, String(value));
}

function listOption(flags: string, description: string, value: number[]): Option {
  const flag = flags.split(' ')[0] ?? flags;
  return new Option(flags, description).argParser(parseList(flag)).default(value, value.join(','));
}

function flagOption(flags: string, description: string): Option {
  return new Option(flags, description).default(false);
}

/** Adds `genesis model chain` and `genesis model horizon`: plan a world before running it. */
export function define(program: Command): void {
  const model = program
    .command('model')
    .description('Plan a world with the reliability model: how success decays with length, and what retries and a verifier buy');

  model
    .command('chain')
    .description('Success and attempts of a chain of steps with retries and a verifier, in closed form and (with --simulate) simulated')
    .addOption(numberOption('--e <rate>', 'probability that one attempt fails visibly (an error or crash); always retried', 0.05))
    .addOption(numberOption('--w <rate>', 'probability that one attempt is silently wrong; only a verifier catches it', 0.03))
    .addOption(numberOption('--attempts <n>', 'attempts allowed per step, the first included', 1))
    .addOption(numberOption('--recall <rate>', 'verifier recall: probability it rejects a wrong result (0 = no verifier)', 0))
    .addOption(numberOption('--false-reject <rate>', 'probability the verifier rejects a right result', 0))
    .addOption(listOption('--steps <list>', 'chain lengths to report, comma-separated', [10, 30]))
    .addOption(numberOption('--simulate <runs>', 'also simulate this many seeded runs per length (0 = closed form only)', 0))
    .addOption(numberOption('--seed <n>', 'seed of the simulation, an integer in [0, 4294967295]', 1))
    .addOption(flagOption('--chart', 'also draw success against chain length as an ASCII chart'))
    .addOption(flagOption('--json', 'print JSON instead of tables'))
    .action(async (options: ModelChainOptions) => {
      const reliability = await import('../../reliability/index.js');
      const report = await import('./model-report.js');
      const input = {
        e: options.e,
        w: options.w,
        attempts: options.attempts,
        recall: options.recall,
        falseReject: options.falseReject,
      };
      const chainModel = reliability.compileChainModel(input);
      const step = reliability.computeStepOutcome(input);
      const lengths = options.steps.map((steps) => reliability.computeChainLength(step, steps));
      const chartLengths = options.chart ? report.chooseChartLengths(Math.max(...options.steps)) : [];
      const simulated = options.simulate !== 0
        ? reliability.simulateChain(input, {
          lengths: [...options.steps, ...chartLengths],
          runs: options.simulate,
          seed: options.seed,
        })
        : [];
      const data = {
        model: chainModel,
        step,
        lengths,
        simulated,
        horizons: [0.5, 0.8, 0.95].map((threshold) => ({
          threshold,
          // From the failure side, so a step right 1 − 1e-15 of the time keeps its horizon.
          steps: reliability.computeHorizonFromFailure(step.silentlyWrong + step.givesUp, threshold),
        })),
      };
      if (options.json) {
        printJson(report.toChainJson(data));
        return;
      }
      process.stdout.write(`${report.renderChain(data)}\n`);
      if (options.chart) {
        const maxSteps = Math.max(...options.steps);
        const chart = report.renderSuccessChart({
          maxSteps,
          // The line is drawn between whole lengths too, where (a·S_A)^n still makes sense.
          closedForm: (n) => step.correct ** n,
          points: simulated,
        });
        process.stdout.write(`\n${chart}\n`);
      }
    });

  model
    .command('horizon')
    .description('How many steps a chain survives at each success threshold, when retries meet failures that always repeat')
    .addOption(numberOption('--p <rate>', 'probability that one attempt at a step succeeds', 0.99))
    .addOption(numberOption('--attempts <n>', 'attempts allowed per step, the first included', 1))
    .addOption(numberOption('--deterministic <fraction>', 'fraction of failures that repeat on every retry', 0))
    .addOption(listOption('--threshold <list>', 'success thresholds, comma-separated, each in (0, 1)', [0.5, 0.8, 0.95]))
    .addOption(flagOption('--json', 'print JSON instead of a table'))
    .action(async (options: ModelHorizonOptions) => {
      const reliability = await import('../../reliability/index.js');
      const report = await import('./model-report.js');
      const input = { p: options.p, attempts: options.attempts, deterministic: options.deterministic };
      const failure = reliability.computeEffectiveFailure(input);
      const data = {
        ...input,
        pEff: 1 - failure,
        failure,
        horizons: options.threshold.map((threshold) => ({
          threshold,
          steps: reliability.computeHorizonFromFailure(failure, threshold),
        })),
      };
      if (options.json) printJson(report.toHorizonJson(data));
      else process.stdout.write(`${report.renderHorizon(data)}\n`);
    });
}
