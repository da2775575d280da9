import { Option, type Command } from 'commander';
import { GenesisError } from '../../../errors/genesis-error.js';
import { MEASURED_COSTS, simulatePipeline } from '../../../reliability/pipeline-model.js';
import { printJson } from '../../output.js';

/** Options of `genesis model chain`, as commander hands them over (numbers already parsed). */
export interface ModelChainOptions {
  e: number;
  w: number;
  attempts: number;
  race: number;
  recall: number;
  falseReject: number;
  steps: number[];
  simulate: number;
  seed: number;
  chart: boolean;
  json: boolean;
  world?: string;
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

/** Adds `genesis model chain`, `horizon` and `pipeline`: plan a world before running it. */
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
    .addOption(
      numberOption('--race <n>', "episodes raced at once per attempt (a task's race: N): the first accepted wins; N times the cost, one attempt's time", 1),
    )
    .addOption(numberOption('--recall <rate>', 'verifier recall: probability it rejects a wrong result (0 = no verifier)', 0))
    .addOption(numberOption('--false-reject <rate>', 'probability the verifier rejects a right result', 0))
    .addOption(listOption('--steps <list>', 'chain lengths to report, comma-separated', [10, 30]))
    .addOption(numberOption('--simulate <runs>', 'also simulate this many seeded runs per length (0 = closed form only)', 0))
    .addOption(numberOption('--seed <n>', 'seed of the simulation, an integer in [0, 4294967295]', 1))
    .addOption(flagOption('--chart', 'also draw success against chain length as an ASCII chart'))
    .addOption(flagOption('--json', 'print JSON instead of tables'))
    // No world by default; every model option shows a default in --help.
    .addOption(
      new Option('--world <dir>', "take --recall and --false-reject from this world's genesis calibrate (flags given on the command line still win)").default(
        '',
        'none',
      ),
    )
    .action(async (options: ModelChainOptions, command: Command) => {
      const reliability = await import('../../../reliability/index.js');
      const report = await import('./report.js');
      const measured = options.world ? await measuredVerifier(options.world) : {};
      const given = (name: string) => command.getOptionValueSource(name) === 'cli';
      const input = {
        e: options.e,
        w: options.w,
        attempts: options.attempts,
        race: options.race,
        recall: measured.recall !== undefined && !given('recall') ? measured.recall : options.recall,
        falseReject: measured.falseReject !== undefined && !given('falseReject') ? measured.falseReject : options.falseReject,
      };
      if (options.world && !options.json) {
        const from = [
          measured.recall !== undefined && !given('recall') ? `recall ${measured.recall.toFixed(3)}` : null,
          measured.falseReject !== undefined && !given('falseReject') ? `false-reject ${measured.falseReject.toFixed(3)}` : null,
        ].filter(Boolean);
        process.stdout.write(
          from.length
            ? `verifier measured by genesis calibrate on ${options.world}: ${from.join(', ')}\n\n`
            : `no calibration of ${options.world} yet (genesis calibrate): the flags' values are used\n\n`,
        );
      }
      const chainModel = reliability.compileChainModel(input);
      const step = reliability.computeStepOutcome(input);
      const lengths = options.steps.map((steps) => reliability.computeChainLength(step, steps));
      const chartLengths = options.chart ? report.chooseChartLengths(Math.max(...options.steps)) : [];
      const simulated =
        options.simulate !== 0
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
      const reliability = await import('../../../reliability/index.js');
      const report = await import('./report.js');
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

  model
    .command('pipeline')
    .description(
      "Throughput and time to land of genesis run's pipeline (episodes, an integration queue verified on speculative tips), as a seeded discrete-event simulation",
    )
    .addOption(numberOption('--workers <n>', 'episodes at once', 4))
    .addOption(numberOption('--agent-min <min>', 'minutes an agent works', 10))
    .addOption(numberOption('--gate-min <min>', 'minutes a gate takes', 5))
    .addOption(numberOption('--reject <rate>', 'probability that a change fails its own gate (a new episode retries it)', 0))
    .addOption(numberOption('--conflict <rate>', 'probability that a change conflicts with those ahead of it when it joins the queue', 0))
    .addOption(
      numberOption('--verify-reject <rate>', 'probability that a change fails on its speculative tip (those behind it are rebuilt and verified again)', 0),
    )
    .addOption(numberOption('--slots <n>', 'verifications at once (0: as many as --workers)', 0))
    .addOption(numberOption('--tasks <n>', 'tasks to land (0: 20 per worker)', 0))
    .addOption(
      numberOption(
        '--start-s <s>',
        'seconds the scheduler takes to start an episode (one at a time, as builds and landings), as the scaling bench measured',
        MEASURED_COSTS.startS,
      ),
    )
    .addOption(
      numberOption(
        '--overhead-s <s>',
        'seconds of each episode outside its agent and gate (workspace, collect, ledger), as the scaling bench measured',
        MEASURED_COSTS.episodeOverheadS,
      ),
    )
    .addOption(
      numberOption(
        '--build-s <s>',
        'seconds the integrator takes to build a change on its tip (one at a time, as landings), as the scaling bench measured',
        MEASURED_COSTS.buildS,
      ),
    )
    .addOption(
      numberOption('--land-s <s>', 'seconds the integrator takes to land one change (one at a time), as the scaling bench measured', MEASURED_COSTS.landS),
    )
    .addOption(
      numberOption(
        '--failed-gate-factor <x>',
        'how much longer a failing gate runs than a passing one (the test, its re-run, the run on the base)',
        MEASURED_COSTS.failedGateFactor,
      ),
    )
    .addOption(flagOption('--gate-on-base', 'episodes gate their change on their own base, never on the speculative tip'))
    .addOption(numberOption('--seed <n>', 'seed of the simulation', 1))
    .addOption(flagOption('--json', 'print JSON instead of lines'))
    .action((o: ModelPipelineOptions) => modelPipeline(o));
}

/** Options of `genesis model pipeline`. */
export interface ModelPipelineOptions {
  workers: number;
  agentMin: number;
  gateMin: number;
  reject: number;
  conflict: number;
  verifyReject: number;
  slots: number;
  tasks: number;
  startS: number;
  overheadS: number;
  buildS: number;
  landS: number;
  failedGateFactor: number;
  gateOnBase: boolean;
  seed: number;
  json: boolean;
}

function modelPipeline(o: ModelPipelineOptions): void {
  for (const [flag, v] of [
    ['--workers', o.workers],
    ['--slots', o.slots || 1],
    ['--tasks', o.tasks || 1],
  ] as const) {
    if (!Number.isInteger(v) || v < 1) throw new GenesisError('invalid-model-input', `${flag} expects a whole number of at least 1, got ${v}`);
  }
  for (const [flag, v] of [
    ['--agent-min', o.agentMin],
    ['--gate-min', o.gateMin],
  ] as const) {
    if (!(v > 0)) throw new GenesisError('invalid-model-input', `${flag} expects minutes above 0, got ${v}`);
  }
  for (const [flag, v] of [
    ['--start-s', o.startS],
    ['--overhead-s', o.overheadS],
    ['--build-s', o.buildS],
    ['--land-s', o.landS],
  ] as const) {
    if (!(v >= 0)) throw new GenesisError('invalid-model-input', `${flag} expects seconds, 0 or more, got ${v}`);
  }
  if (!(o.failedGateFactor >= 1))
    throw new GenesisError('invalid-model-input', `--failed-gate-factor expects a multiple of at least 1, got ${o.failedGateFactor}`);
  for (const [flag, v] of [
    ['--reject', o.reject],
    ['--conflict', o.conflict],
    ['--verify-reject', o.verifyReject],
  ] as const) {
    if (!(v >= 0 && v < 1)) throw new GenesisError('invalid-model-input', `${flag} expects a probability in [0, 1), got ${v}`);
  }
  const r = simulatePipeline({
    workers: o.workers,
    agentMin: o.agentMin,
    gateMin: o.gateMin,
    reject: o.reject,
    conflict: o.conflict,
    verifyReject: o.verifyReject,
    slots: o.slots || undefined,
    tasks: o.tasks || undefined,
    seed: o.seed,
    startMin: o.startS / 60,
    episodeOverheadMin: o.overheadS / 60,
    buildMin: o.buildS / 60,
    landMin: o.landS / 60,
    failedGateFactor: o.failedGateFactor,
    gateOnTip: !o.gateOnBase,
  });
  if (o.json) {
    printJson(r);
    return;
  }
  process.stdout.write(
    [
      `${r.accepted} changes landed in ${r.makespanMin.toFixed(1)} min: ${r.acceptedPerHour.toFixed(1)} per hour`,
      `ceiling (no integration cost): ${r.ceilingMin.toFixed(1)} min; efficiency ${r.efficiency.toFixed(2)}`,
      `gates per accepted change: ${r.gatesPerAccepted.toFixed(2)} (${r.verifications} verifications on speculative tips); mean time from episode start to landing: ${r.meanTimeToLandMin.toFixed(1)} min; rejected: ${r.rejected}`,
    ].join('\n') + '\n',
  );
}

/** A world's measured verifier terms (genesis calibrate), those it has. */
async function measuredVerifier(path: string): Promise<{ recall?: number; falseReject?: number }> {
  const { LocalWorld } = await import('../../../world/local-world.js');
  const calibration = await (await LocalWorld.open(path)).calibration();
  return {
    ...(calibration?.recall ? { recall: calibration.recall.rate } : {}),
    ...(calibration?.falseRejection ? { falseReject: calibration.falseRejection.rate } : {}),
  };
}
