import { Option } from 'commander';

/** `--redis <url>`, also read from GENESIS_REDIS. */
export function redisOption(description = 'Redis for the distributed queue (BullMQ); without it, episodes run in this process'): Option {
  return new Option('--redis <url>', description).env('GENESIS_REDIS');
}
