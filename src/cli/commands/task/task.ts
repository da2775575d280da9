import type { Command } from 'commander';
import { requireWorld, steeringTimeoutOption, worldOption } from '../../world-option.js';

export function define(program: Command): void {
  const task = program.command('task').description("change a world's tasks: give a blocked task new attempts, reopen a done one, or add a task");
  task
    .command('retry')
    .description(
      'unblock a task, whatever blocked it (attempts used, the same failure twice, a broken base): earlier failures stop counting; the next genesis run, or the one in progress, tries it again',
    )
    .argument('<id>', 'the blocked task')
    .addOption(worldOption())
    .option('--note <text>', "a note for the next attempt's prompt: what changed, or a hint")
    .option('--json', 'print the retry marker as JSON')
    .action(async (id: string, opts: { world?: string; note?: string; json?: boolean }) => {
      const { LocalWorld } = await import('../../../world/local-world.js');
      const { retryTask } = await import('../../../server/retry-task.js');
      const { userInfo, hostname } = await import('node:os');
      const { withCliName } = await import('../../invocation.js');
      const worldPath = requireWorld(opts);
      const world = await LocalWorld.open(worldPath);
      const { retry } = await retryTask(world, { task: id, note: opts.note ?? null, by: `cli ${userInfo().username}@${hostname()}` });
      if (opts.json) {
        process.stdout.write(`${JSON.stringify(retry, null, 2)}\n`);
        return;
      }
      process.stdout.write(
        withCliName(
          `task ${id} gets new attempts (marker ${retry.ref}); run genesis run --world ${worldPath} to go on (a run in progress picks it up at its next step)\n`,
        ),
      );
    });
  task
    .command('reopen')
    .description(
      'make a done task pending again, for when its acceptance changed (a stricter test, a bug found): the reason is recorded in the accepted history and goes into the next prompt; a run in progress takes it between two landings',
    )
    .argument('<id>', 'the done task')
    .addOption(worldOption())
    .requiredOption('--reason <text>', 'why the work must be done again')
    .addOption(steeringTimeoutOption())
    .option('--json', 'print the reopening as JSON')
    .action(async (id: string, opts: { world?: string; reason: string; timeout?: number; json?: boolean }) => {
      const { LocalWorld } = await import('../../../world/local-world.js');
      const { steerWorld } = await import('../../../operations/steer-world.js');
      const { outcomeResult } = await import('../../../operations/carry-out-steering.js');
      const { cliSteerOptions } = await import('../../world-option.js');
      const { userInfo, hostname } = await import('node:os');
      const { withCliName } = await import('../../invocation.js');
      const worldPath = requireWorld(opts);
      const world = await LocalWorld.open(worldPath);
      const steer = await cliSteerOptions(world, {}, `the reopening of task ${id}`);
      const request = { kind: 'reopen' as const, by: `cli ${userInfo().username}@${hostname()}`, task: id, reason: opts.reason };
      const result = outcomeResult(await steerWorld(world, request, steer).finally(() => steer.dispose()), 'reopen');
      if (opts.json) {
        process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
        return;
      }
      process.stdout.write(
        withCliName(
          `task ${id} is pending again (reopened as ${result.commit.slice(0, 12)}): the next genesis run --world ${worldPath} does it again, or the one in progress\n`,
        ),
      );
    });
  task
    .command('add')
    .description('add a task to world.yaml on the accepted branch, validated and verified like the first commit')
    .argument('<id>', 'the new task id')
    .addOption(worldOption())
    .requiredOption('--title <text>', 'one line saying what the task delivers')
    .requiredOption('--paths <list>', 'comma-separated files, directories or globs the task may change')
    .option('--description <text>', 'what to build, for the agent', '')
    .option('--acceptance <text>', 'how the result is judged, for the agent', '')
    .option('--depends-on <list>', 'comma-separated ids of tasks that must be done first', '')
    .option('--check <command>', "the task's acceptance command, run by the gate")
    .addOption(steeringTimeoutOption())
    .option('--json', 'print the new commit as JSON')
    .action(
      async (
        id: string,
        opts: {
          world?: string;
          title: string;
          paths: string;
          description: string;
          acceptance: string;
          dependsOn: string;
          check?: string;
          timeout?: number;
          json?: boolean;
        },
      ) => {
        const { LocalWorld } = await import('../../../world/local-world.js');
        const { steerWorld } = await import('../../../operations/steer-world.js');
        const { outcomeResult } = await import('../../../operations/carry-out-steering.js');
        const { cliSteerOptions } = await import('../../world-option.js');
        const { userInfo, hostname } = await import('node:os');
        const world = await LocalWorld.open(requireWorld(opts));
        const list = (text: string) =>
          text
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean);
        const spec = {
          id,
          title: opts.title,
          description: opts.description,
          acceptance: opts.acceptance,
          paths: list(opts.paths),
          dependsOn: list(opts.dependsOn),
          ...(opts.check ? { check: opts.check } : {}),
        };
        // While a run goes on, its scheduler adds the task between two landings and starts it when it is ready.
        const steer = await cliSteerOptions(world, opts, `task ${id}`);
        const request = { kind: 'add-task' as const, by: `cli ${userInfo().username}@${hostname()}`, task: spec };
        const { commit } = outcomeResult(await steerWorld(world, request, steer).finally(() => steer.dispose()), 'add-task');
        if (opts.json) {
          process.stdout.write(`${JSON.stringify({ commit, task: id })}\n`);
          return;
        }
        process.stdout.write(`added task ${id} as ${commit.slice(0, 12)}\n`);
      },
    );
}
