import { realpathSync, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** This checkout's (or installed package's) bin/genesis.js: src/cli and dist/cli both sit two levels below it. */
const BIN = fileURLToPath(new URL('../../bin/genesis.js', import.meta.url));

const COMMANDS = [
  'init',
  'run',
  'demo',
  'log',
  'episodes',
  'show',
  'model',
  'worker',
  'task',
  'review',
  'status',
  'stats',
  'serve',
  'doctor',
  'audit',
  'calibrate',
  'amend',
  'deps',
];
const COMMAND_AFTER_GENESIS = new RegExp(`(^|[\\s(\`'":])genesis (?=(?:${COMMANDS.join('|')})\\b)`, 'g');

let cached: string | null = null;

/**
 * How to run this very Genesis from the current directory, as a hint should print it: `genesis`
 * when that name on PATH is this program (after `npm link` or `npm install -g .`), else
 * `node <path>/bin/genesis.js`, or what GENESIS_CLI_NAME says. Never `npx genesis`, which outside the checkout fetches an
 * unrelated package of that name from the registry.
 */
export function cliName(): string {
  // A container's own path means nothing on the host a person types at: docker-compose.yml says
  // how its commands are run from there (GENESIS_CLI_NAME="docker compose run --rm scheduler").
  cached ??= process.env.GENESIS_CLI_NAME?.trim() || (onPath() ? 'genesis' : `node ${shortPath(BIN)}`);
  return cached;
}

/** Rewrites every `genesis <command>` in a text meant to be typed into `cliName() <command>`. */
export function withCliName(text: string): string {
  const name = cliName();
  return name === 'genesis' ? text : text.replace(COMMAND_AFTER_GENESIS, (_m, before: string) => `${before}${name} `);
}

function onPath(): boolean {
  const mine = realpathOrNull(BIN);
  return (process.env.PATH ?? '').split(delimiter).some((dir) => {
    if (!dir || !isAbsolute(dir)) return false;
    const candidate = join(dir, 'genesis');
    return isFile(candidate) && realpathOrNull(candidate) === mine;
  });
}

function shortPath(path: string): string {
  const rel = relative(process.cwd(), path);
  if (rel.startsWith('..') || isAbsolute(rel)) return path;
  return /\s/.test(rel) ? JSON.stringify(rel) : rel;
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function realpathOrNull(path: string): string | null {
  try {
    return realpathSync(path);
  } catch {
    return null;
  }
}
