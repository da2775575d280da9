import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { runChecked, runCommand } from '../../../src/spawn/spawner.js';

const exec = promisify(execFile);
const ENV = { PATH: process.env.PATH ?? '/usr/bin:/bin' };

/** The spawner of this process: the `node -e` child started with its small heap. */
async function spawnerPid(): Promise<number> {
  const { stdout } = await exec('pgrep', ['-P', String(process.pid), '-f', 'max-old-space-size=64']);
  const pids = stdout.trim().split('\n').filter(Boolean).map(Number);
  expect(pids).toHaveLength(1);
  return pids[0]!;
}

const MODES = [
  { name: 'through the spawner', value: undefined },
  { name: 'forked here (GENESIS_SPAWNER=0)', value: '0' },
] as const;

for (const mode of MODES) {
  describe(`a command run to its end, ${mode.name}`, () => {
    const before = process.env.GENESIS_SPAWNER;
    const set = () => {
      if (mode.value === undefined) delete process.env.GENESIS_SPAWNER;
      else process.env.GENESIS_SPAWNER = mode.value;
    };
    afterEach(() => {
      if (before === undefined) delete process.env.GENESIS_SPAWNER;
      else process.env.GENESIS_SPAWNER = before;
    });

    it('gets the environment it is given and nothing else, its input, and its cwd', async () => {
      set();
      const dir = await mkdtemp(join(tmpdir(), 'spawner-'));
      try {
        const ran = await runCommand({
          file: 'sh',
          args: ['-c', 'echo "$ONLY:${HOME:-no home}:$(pwd)"; cat; echo oops >&2; exit 3'],
          cwd: dir,
          env: { ...ENV, ONLY: 'given' },
          input: 'from stdin\n',
        });
        expect(ran).toMatchObject({ exitCode: 3, signal: null, cut: false });
        expect(ran.stdout.toString()).toBe(`given:no home:${dir}\nfrom stdin\n`);
        expect(ran.stderr.toString()).toBe('oops\n');
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });

    it('reads an empty standard input when given none, rather than waiting on one', async () => {
      set();
      const ran = await runCommand({ file: 'cat', args: [], env: ENV });
      expect(ran).toMatchObject({ exitCode: 0, cut: false });
      expect(ran.stdout.length).toBe(0);
    });

    it('keeps the first maxBytes of a command that would print without end, and stops it', async () => {
      set();
      const ran = await runCommand({ file: 'yes', args: ['a line'], env: ENV, maxBytes: 100_000 });
      expect(ran.cut).toBe(true);
      expect(ran.stdout.length).toBe(100_000);
      expect(ran.stdout.toString().startsWith('a line\na line\n')).toBe(true);
      expect(ran.signal ?? ran.exitCode).toBeTruthy();
    });

    it("rejects with the system's code when the program does not exist", async () => {
      set();
      await expect(runCommand({ file: 'no-such-program-here', args: [], env: ENV })).rejects.toMatchObject({ code: 'ENOENT' });
    });

    it('checked: resolves on exit 0, else rejects with the exit code and what it said', async () => {
      set();
      await expect(runChecked('true', [], ENV)).resolves.toBeUndefined();
      await expect(runChecked('sh', ['-c', 'echo it broke >&2; exit 7'], ENV)).rejects.toMatchObject({ code: 7, message: 'sh exited 7: it broke' });
    });
  });
}

describe('the spawner process', () => {
  it('answers after the terminal interrupts it (Ctrl-C is for Genesis), and is replaced once it is killed', async () => {
    delete process.env.GENESIS_SPAWNER;
    await runCommand({ file: 'true', args: [], env: ENV });
    const first = await spawnerPid();
    process.kill(first, 'SIGINT');
    await new Promise((r) => setTimeout(r, 100));
    expect((await runCommand({ file: 'echo', args: ['still here'], env: ENV })).stdout.toString()).toBe('still here\n');
    expect(await spawnerPid()).toBe(first);

    // Killed while a command runs: that command's caller learns it was lost, and the next request gets a new spawner.
    const running = runCommand({ file: 'sleep', args: ['5'], env: ENV });
    await new Promise((r) => setTimeout(r, 100));
    process.kill(first, 'SIGKILL');
    await expect(running).rejects.toMatchObject({ code: 'spawner-lost' });
    expect((await runCommand({ file: 'echo', args: ['again'], env: ENV })).stdout.toString()).toBe('again\n');
    expect(await spawnerPid()).not.toBe(first);
  });

  it('does not keep a process alive that has nothing left to do, and ends with it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'spawner-exit-'));
    try {
      const script = join(dir, 'one-command.mts');
      // It prints what its command said, then its spawner's pid, and has nothing left to do.
      await writeFile(
        script,
        `import { runCommand } from ${JSON.stringify(join(process.cwd(), 'src/spawn/spawner.ts'))};\n` +
          "const ran = await runCommand({ file: 'echo', args: ['done'], env: { PATH: process.env.PATH } });\n" +
          "const pgrep = await runCommand({ file: 'pgrep', args: ['-P', String(process.pid), '-f', 'max-old-space-size=64'], env: { PATH: process.env.PATH } });\n" +
          'process.stdout.write(ran.stdout.toString() + pgrep.stdout.toString());\n',
      );
      const { stdout } = await exec(process.execPath, ['--import', 'tsx', script], { cwd: process.cwd(), timeout: 20_000 });
      const [said, pid] = stdout.trim().split('\n');
      expect(said).toBe('done');
      expect(Number(pid)).toBeGreaterThan(0);
      // Its spawner ended with it (the channel closed), rather than living on as an orphan.
      const alive = () => {
        try {
          process.kill(Number(pid), 0);
          return true;
        } catch {
          return false;
        }
      };
      for (let i = 0; i < 50 && alive(); i++) await new Promise((r) => setTimeout(r, 50));
      expect(alive()).toBe(false);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 30_000);
});
