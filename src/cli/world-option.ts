import { Option } from 'commander';
import { GenesisError } from '../errors/genesis-error.js';
import { wholeNumber } from './option-parsers.js';

/** `--world <path>`, also read from GENESIS_WORLD. */
export function worldOption(): Option {
  return new Option('--world <path>', 'the world: a directory made by genesis init').env('GENESIS_WORLD');
}

export function requireWorld(opts: { world?: string }): string {
  if (opts.world) return opts.world;
  throw new GenesisError('world-required', 'no world given', { hint: 'pass --world <path> or set GENESIS_WORLD' });
}

export function sandboxOption(): Option {
  return new Option('--sandbox <kind>', 'override verify.sandbox of world.yaml').choices(['auto', 'docker', 'bwrap', 'none']);
}

/** `--timeout <seconds>`: how long a command that changes the world waits for a running `genesis run` to take the change. */
export function steeringTimeoutOption(): Option {
  return new Option('--timeout <seconds>', 'while a genesis run of this world runs: how long to wait for its scheduler to take the change')
    .argParser(wholeNumber('--timeout', 1))
    .default(120);
}
