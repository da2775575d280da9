import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/temp-dir.js';

const BIN = fileURLToPath(new URL('../../../bin/genesis.js', import.meta.url));

/** `genesis <args> | true`: the reader exits before the first write, so every write meets a closed pipe. */
function intoClosedPipe(args: string[], env: Record<string, string> = {}): { status: number; stderr: string } {
  const quoted = args.map((a) => `'${a}'`).join(' ');
  const r = spawnSync('bash', ['-c', `"${process.execPath}" "${BIN}" ${quoted} 2>"$ERR" | true; exit "\${PIPESTATUS[0]}"`], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: r.status ?? -1, stderr: r.error ? String(r.error) : r.stderr };
}

describe('genesis writing into a pipe whose reader has gone', () => {
  it('exits with its own exit code and no stack trace, whatever the command prints', async () => {
    const dir = await tempDir('genesis-pipe-');
    const cases: Array<[string[], number]> = [
      [['--help'], 0],
      [['deps', '--help'], 0],
      [['deps', 'list'], 0],
      [['model', 'horizon', '--p', '0.99'], 0],
    ];
    for (const [args, code] of cases) {
      const err = `${dir}/${args.join('-')}.err`;
      const r = intoClosedPipe(args, { ERR: err });
      const stderr = readFileSync(err, 'utf8');
      expect({ args, status: r.status, stderr }).toEqual({ args, status: code, stderr: '' });
    }
  }, 120_000);

  it('carries on to its own exit code when standard error has no reader either', () => {
    // Both streams into one pipe whose reader has gone: commander's usage error is written to stderr first.
    const r = spawnSync('bash', ['-c', `"${process.execPath}" "${BIN}" calibrate --world /tmp --commits x 2>&1 | true; exit "\${PIPESTATUS[0]}"`], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status).toBe(2);
  }, 60_000);
});
