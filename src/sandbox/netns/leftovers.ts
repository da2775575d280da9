import { readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isAlive } from '../process/process-alive.js';

/** Start of the name of a pool's directory (`<prefix><pid>-XXXXXX`) and of its namespaces' marker. */
export const AGENT_NETNS_PREFIX = 'genesis-agent-netns-';

/** The word in the command line of a namespace's holder that names the process that made it. */
export function agentNetnsMarker(pid = process.pid): string {
  return `${AGENT_NETNS_PREFIX}${pid}`;
}

/**
 * Removes what agent namespace pools of processes that are gone left: their directories, and any
 * process of their namespaces still running. Those processes end by themselves when their maker
 * dies (their pipes close, see NetnsSlot), so this finds them only if something held a pipe open;
 * they are found by their command line: a holder names its maker (agentNetnsMarker), slirp4netns
 * the namespace file under its maker's /proc entry. Returns how many processes it killed.
 */
export async function removeStaleAgentNetns(): Promise<number> {
  let killed = 0;
  for (const pid of await readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(pid)) continue;
    const argv = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0');
    if (argv.at(-1) === '') argv.pop();
    const owner = ownerOf(argv);
    if (owner === null || isAlive(owner)) continue;
    try {
      process.kill(Number(pid), 'SIGKILL');
      killed++;
    } catch {
      // gone meanwhile
    }
  }
  for (const name of await readdir(tmpdir()).catch(() => [] as string[])) {
    const pid = Number(new RegExp(`^${AGENT_NETNS_PREFIX}(\\d+)-`).exec(name)?.[1]);
    if (pid && !isAlive(pid)) await rm(join(tmpdir(), name), { recursive: true, force: true }).catch(() => undefined);
  }
  return killed;
}

/** The pid of the process that made a namespace process with this argv, or null when it is none. */
function ownerOf(argv: readonly string[]): number | null {
  const marker = new RegExp(`^${AGENT_NETNS_PREFIX}(\\d+)$`);
  const holder = argv.length === 4 && argv[0] === '/bin/sh' && argv[1] === '-c' ? marker.exec(argv[3]!) : null;
  if (holder) return Number(holder[1]);
  const path = argv.includes('--netns-type=path') && argv.some((a) => a.endsWith('slirp4netns')) ? argv.at(-2) : undefined;
  const slirp = path ? /^\/proc\/(\d+)\/fd\/\d+$/.exec(path) : null;
  return slirp ? Number(slirp[1]) : null;
}
