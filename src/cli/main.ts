import { helpExamples } from './help-examples.js';
import { withCliName } from './invocation.js';
import { Command, CommanderError } from 'commander';
import { isGenesisError } from '../errors/genesis-error.js';
import { EXIT } from './exit-codes.js';

/**
 * Each command module exports `define(program)`, which declares the command's options and loads
 * its implementation lazily inside the action, so `genesis --help` stays fast.
 */
const COMMAND_MODULES = [
  'init',
  'run',
  'demo',
  'log',
  'episodes',
  'show',
  'model',
  'worker',
  'task',
  'amend',
  'status',
  'stats',
  'serve',
  'doctor',
  'deps',
  'audit',
  'prune',
] as const;

export async function main(argv: string[]): Promise<number> {
  const program = new Command('genesis')
    .description(
      'Run software projects built by coding agents: disposable episodes, a gate that verifies every change, and an accepted history that only ever holds passing trees.',
    )
    .version('0.1.0')
    .showHelpAfterError('(run with --help for usage)')
    .addHelpText('after', () => helpExamples())
    .exitOverride();
  for (const name of COMMAND_MODULES) {
    const mod = (await import(`./commands/${name}/${name}.js`)) as { define(program: Command): void };
    mod.define(program);
  }
  try {
    await program.parseAsync(argv);
    return process.exitCode === undefined ? EXIT.ok : Number(process.exitCode);
  } catch (error) {
    return reportError(error);
  }
}

function reportError(error: unknown): number {
  if (error instanceof CommanderError) {
    // commander already printed the message (or the help text).
    return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
  }
  if (isGenesisError(error)) {
    const [first, ...rest] = error.message.split('\n');
    process.stderr.write(`genesis: ${first} [${error.code}]\n${rest.map((line) => `${line}\n`).join('')}`);
    if (error.hint) process.stderr.write(`  what to do: ${withCliName(error.hint)}\n`);
    return EXIT.error;
  }
  process.stderr.write(`genesis: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.stderr.write('  this is a bug in Genesis; the accepted history is unchanged.\n');
  return EXIT.internal;
}
