/**
 * The spawner's own program, run by `node -e` (spawner.ts): it starts each command a request
 * names and answers with its exit and its output. It loads nothing but Node's own modules, so
 * its memory stays a few tens of megabytes and a fork of it copies that much, where a fork of
 * Genesis copies Genesis's (measured: 1.3 ms per spawn at 50 MB of resident memory, 14 ms at
 * 260 MB, on the event loop every time).
 *
 * A request: `{ id, file, args, cwd, env, input, maxBytes }`. An answer: `{ id, exitCode,
 * signal, stdout, stderr, cut }` (stdout and stderr as bytes; `cut` when stdout passed
 * `maxBytes`, at which point the command is killed and its first `maxBytes` kept), or
 * `{ id, error: { code, message } }` when it could not be started. A command with no input reads
 * an empty standard input. Standard error is kept up to a megabyte: it is only ever a message.
 *
 * It ignores the terminal's signals (Ctrl-C reaches Genesis, which ends its commands in order)
 * and ends when Genesis's end of the channel closes; a command it started then runs to its own end.
 */
export const SPAWNER_SOURCE = String.raw`
'use strict';
const { spawn } = require('child_process');
const STDERR_MAX = 1024 * 1024;
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => {});
process.on('disconnect', () => process.exit(0));
process.on('message', (request) => {
  const { id, file, args, cwd, env, input, maxBytes } = request;
  let child;
  try {
    child = spawn(file, args, { cwd, env, stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
  } catch (error) {
    process.send({ id, error: { code: error.code, message: String(error.message) } });
    return;
  }
  const out = [];
  const err = [];
  let outBytes = 0;
  let errBytes = 0;
  let cut = false;
  let failed = null;
  child.on('error', (error) => { failed = { code: error.code, message: String(error.message) }; });
  child.stdout.on('data', (chunk) => {
    if (cut) return;
    out.push(chunk);
    outBytes += chunk.length;
    if (maxBytes !== undefined && outBytes > maxBytes) {
      cut = true;
      child.kill('SIGTERM');
    }
  });
  child.stderr.on('data', (chunk) => {
    if (errBytes >= STDERR_MAX) return;
    err.push(chunk);
    errBytes += chunk.length;
  });
  if (input !== undefined) {
    child.stdin.on('error', () => {});
    child.stdin.end(input);
  }
  child.on('close', (exitCode, signal) => {
    if (failed && child.pid === undefined) return process.send({ id, error: failed });
    let stdout = Buffer.concat(out);
    if (cut) stdout = stdout.subarray(0, maxBytes);
    process.send({ id, exitCode, signal, stdout, stderr: Buffer.concat(err), cut });
  });
});
`;
