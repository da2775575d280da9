import { Option } from 'commander';
import { GenesisError } from '../errors/genesis-error.js';

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
