import { helpExamples } from './help-examples.js';
import { withCliName } from './invocation.js';
import { CommanderError } from 'commander';
import { createProgram } from './program.js';
import { isGenesisError } from '../errors/genesis-error.js';
import { EXIT } from './exit-codes.js';
import { showControls } from '../ledger/terminal-text.js';
import { dropProgressOnClosedPipe, exitQuietlyOnClosedPipe } from './closed-pipe.js';

export async function main(argv: string[]): Promise<number> {
  exitQuietlyOnClosedPipe();
  dropProgressOnClosedPipe();
  const program = await createProgram();
  program.addHelpText('after', () => helpExamples());
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
    // A message may quote what an agent or a candidate wrote (a path, a line of world.yaml).
    const [first, ...rest] = showControls(error.message).split('\n');
    process.stderr.write(`genesis: ${first} [${error.code}]\n${rest.map((line) => `${line}\n`).join('')}`);
    if (error.hint) process.stderr.write(`  what to do: ${showControls(withCliName(error.hint))}\n`);
    return EXIT.error;
  }
  process.stderr.write(`genesis: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.stderr.write('  this is a bug in Genesis; the accepted history is unchanged.\n');
  return EXIT.internal;
}
