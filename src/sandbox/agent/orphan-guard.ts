import { execFile } from 'node:child_process';

/**
 * The shell that stands between Genesis and an unsandboxed agent, so that the agent and everything
 * it started die with Genesis even under `kill -9`: it runs with PR_SET_PDEATHSIG (through
 * `setpriv --pdeathsig HUP`), so the kernel signals it the moment its parent dies, and on that
 * signal it kills the members of the agent's cgroup (when there is one), every process carrying
 * the agent's marker variable (daemons that left with setsid) and its own process group.
 *
 * It is otherwise transparent: the agent gets its stdin (an asynchronous command would get
 * /dev/null), the TERM that stops an agent reaches the agent while the shell keeps waiting, and
 * the shell exits with the agent's status.
 *
 * $1 is the cgroup's `cgroup.procs` file ('' without a cgroup), the rest is the agent's argv.
 */
export const ORPHAN_GUARD_SCRIPT = [
  'cg=$1; shift',
  'if [ -n "$cg" ]; then echo $$ > "$cg" || exit 126; fi',
  'orphaned() {',
  "  trap '' HUP TERM INT",
  '  for pid in $([ -n "$cg" ] && cat "$cg" 2>/dev/null) $(grep -lsa -- "GENESIS_AGENT_RUN=$GENESIS_AGENT_RUN" /proc/[0-9]*/environ | sed "s#^/proc/\\([0-9]*\\)/environ\\$#\\1#"); do',
  '    [ "$pid" = $$ ] || kill -KILL "$pid" 2>/dev/null',
  '  done',
  '  kill -KILL 0',
  '}',
  'trap orphaned HUP',
  'trap : TERM INT',
  'exec 3<&0',
  '"$@" 0<&3 3<&- &',
  'child=$!',
  'exec 3<&-',
  'while :; do',
  '  wait "$child"; status=$?',
  '  kill -0 "$child" 2>/dev/null || exit "$status"',
  'done',
].join('\n');

let pdeathsig: Promise<boolean> | null = null;

/** Whether this machine's setpriv can set a parent-death signal (util-linux 2.33 and later). */
export function setprivHasPdeathsig(): Promise<boolean> {
  pdeathsig ??= new Promise((resolve) => {
    execFile('setpriv', ['--help'], (error, stdout) => resolve(!error && stdout.includes('--pdeathsig')));
  });
  return pdeathsig;
}

/** The argv that runs `argv` under the guard; without setpriv's --pdeathsig, the guard alone (the next start still cleans up). */
export function guardedArgv(argv: readonly string[], cgroupProcs: string | null, withPdeathsig: boolean): string[] {
  const shell = ['/bin/sh', '-c', ORPHAN_GUARD_SCRIPT, 'genesis-agent', cgroupProcs ?? '', ...argv];
  return withPdeathsig ? ['setpriv', '--pdeathsig', 'HUP', '--', ...shell] : shell;
}
