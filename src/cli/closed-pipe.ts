/**
 * `genesis <command> | head`: once the reader of standard output has gone, what is left to print
 * has no one to read it. Node reports that as an 'error' event on stdout, which nothing else
 * listens for, so without this handler the process dies with a stack trace for output no one
 * wanted. Writes after that are dropped; a command with a graceful stop of its own (it listens for
 * SIGTERM: run, serve, worker) is stopped that way, any other exits at once with its exit code.
 * The stop is emitted as SIGTERM carrying CLOSED_PIPE, so a command that takes a second signal as
 * "quit at once" can tell it from one: Ctrl-C on `genesis run | tee log` reaches tee too, and the
 * pipe it leaves closed is no second Ctrl-C.
 */
export const CLOSED_PIPE = 'SIGPIPE' satisfies NodeJS.Signals;

export function exitQuietlyOnClosedPipe(stream: NodeJS.WriteStream = process.stdout): void {
  let closed = false;
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    if (closed) return;
    closed = true;
    stream.write = (() => true) as typeof stream.write;
    if (process.listenerCount('SIGTERM') > 0) process.emit('SIGTERM', CLOSED_PIPE);
    else process.exit(process.exitCode === undefined ? 0 : Number(process.exitCode));
  });
}

/**
 * `genesis calibrate 2>&1 | head`: standard error carries progress, warnings and the error
 * report, never the command's product. When its reader has gone, the rest of it is dropped and
 * the command carries on to its own end and exit code (a calibration still keeps its figures, a
 * run still stops only when asked), instead of dying at its next progress line.
 */
export function dropProgressOnClosedPipe(stream: NodeJS.WriteStream = process.stderr): void {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    stream.write = (() => true) as typeof stream.write;
  });
}
