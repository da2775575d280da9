/**
 * How `docker run` reads a container that never ran, as the docker CLI does it (`toStatusError`,
 * Docker 20.10 to 28): 127 when the program is missing, 126 when it cannot be executed, 125 for
 * docker's own failure. `$1` is docker's message.
 */
const EXIT_AS_DOCKER_RUN = [
  'exit_as_docker_run() {',
  '  case "$1" in',
  '    *"executable file not found"*|*"no such file or directory"*|*"system cannot find the file specified"*) exit 127 ;;',
  '    *"permission denied"*|*"is a directory"*) exit 126 ;;',
  '  esac',
  '  exit 125',
  '}',
].join('\n');

/**
 * Runs a container Genesis has already created, attached (`docker start -ai`: the agent's stdin,
 * stdout and stderr as with `docker run -i`, signals passed on to it), exits with the code
 * `docker run` gave, and then removes the container, so that one whose owner died still goes when
 * the agent ends (the `--rm` of `docker run`). $1 is the container's name.
 *
 * Where `docker start` says less than `docker run` did:
 * - it says 1 for every container that never started: the daemon's error says 127, 126 or 125;
 * - at the TERM that stops the agent (the whole process group gets it) it passes the TERM on and
 *   gives up at once (0, or 143 when the TERM came before it could pass it on), where `docker run`
 *   waited for the agent: `docker wait` waits here, so the agent keeps its grace and its own exit
 *   code (or the KILL at the end of the grace ends both, 137 as before). After the TERM this shell
 *   spends one docker call (two when the code is 0) and leaves the removal to its owner, which is
 *   alive: the grace is the agent's;
 * - a TERM before the container started ends `docker run` by that signal: so does this shell.
 */
const DOCKER_START_SCRIPT = [
  EXIT_AS_DOCKER_RUN,
  'termed=',
  "trap 'termed=1' TERM",
  'docker start --attach --interactive "$1"',
  'status=$?',
  `never_started() { case "$(docker inspect --format '{{.State.StartedAt}}' "$1" 2>/dev/null)" in 0001-01-01T00:00:00Z|'') return 0 ;; esac; return 1; }`,
  'if [ -n "$termed" ]; then',
  '  code=$(docker wait "$1" 2>/dev/null) || code=',
  '  if [ "$code" != 0 ] && [ -n "$code" ]; then exit "$code"; fi',
  '  if never_started "$1"; then trap - TERM; kill -TERM $$; fi',
  '  [ -n "$code" ] || code=$status',
  '  exit "$code"',
  'fi',
  'if [ "$status" -eq 1 ] && never_started "$1"; then',
  `  status=$( (exit_as_docker_run "$(docker inspect --format '{{.State.Error}}' "$1" 2>/dev/null)"); echo $?)`,
  'fi',
  'docker rm --force "$1" >/dev/null 2>&1',
  'exit "$status"',
].join('\n');

/**
 * Reports a `docker create` that failed the way `docker run` reported it: docker's message on
 * stderr and the exit code `docker run` gave for it. $1 is the message.
 */
const DOCKER_CREATE_FAILED_SCRIPT = [EXIT_AS_DOCKER_RUN, 'printf "%s\\n" "$1" >&2', 'exit_as_docker_run "$1"'].join('\n');

/** The argv of the launcher that runs the created container `name`. */
export function dockerStartArgv(name: string): string[] {
  return ['/bin/sh', '-c', DOCKER_START_SCRIPT, 'genesis-agent', name];
}

/** The argv of a launcher that only reports docker's failure to create the container. */
export function dockerCreateFailedArgv(message: string): string[] {
  return ['/bin/sh', '-c', DOCKER_CREATE_FAILED_SCRIPT, 'genesis-agent', message];
}
