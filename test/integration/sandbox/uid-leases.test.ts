import { spawn } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { leaseUid } from '../../../src/sandbox/process/uid-leases.js';
import { tempDir } from '../../helpers/temp-dir.js';

/** A process that leases `count` uids of the range and holds them: its answer, and a way to end it (kindly or by SIGKILL). */
function holder(dir: string, range: { first: number; count: number }, count: number) {
  const proc = spawn(
    process.execPath,
    ['--import', 'tsx', 'test/fixtures/sandbox/uid-lease-child.ts', dir, String(range.first), String(range.count), String(count)],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  const uids = new Promise<Array<number | string>>((resolve, reject) => {
    let out = '';
    proc.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('\n')) resolve(JSON.parse(out) as Array<number | string>);
    });
    proc.on('exit', () => reject(new Error(`the holder ended before answering: ${out}`)));
  });
  const ended = new Promise<void>((resolve) => proc.on('exit', () => resolve()));
  return {
    uids,
    end: () => {
      proc.stdin.end();
      return ended;
    },
    kill: () => {
      proc.kill('SIGKILL');
      return ended;
    },
  };
}

describe('sandbox uid leases', () => {
  it('never give one uid to two processes claiming at the same time, and refuse one more than the range holds', async () => {
    const dir = await tempDir('genesis-uid-leases-');
    // Room for every claim and a few more: two claims that meet on one uid may both give it up and move on.
    const range = { first: 200_000, count: 16 };
    const holders = [0, 1, 2, 3].map(() => holder(dir, range, 3));
    const all = (await Promise.all(holders.map((h) => h.uids))).flat();
    expect(all.filter((u) => typeof u !== 'number')).toEqual([]);
    expect(new Set(all).size).toBe(12);
    const rest = [0, 1, 2, 3].map(() => leaseUid(undefined, { dir, range }).uid);
    expect(new Set([...all, ...rest]).size).toBe(16);
    expect(() => leaseUid(undefined, { dir, range })).toThrow(expect.objectContaining({ code: 'sandbox-uid-exhausted' }));
    // Given back when a holder ends, and taken over when one is killed (no exit of its own).
    await holders[0]!.end();
    await holders[1]!.kill();
    const again = [0, 1, 2, 3, 4, 5].map(() => leaseUid(undefined, { dir, range }).uid);
    expect(new Set([...again, ...rest, ...all.slice(6)]).size).toBe(16);
    expect(() => leaseUid(undefined, { dir, range })).toThrow(expect.objectContaining({ code: 'sandbox-uid-exhausted' }));
    await Promise.all(holders.slice(2).map((h) => h.end()));
    // The killed holder's claims went when they were taken over; the ones that ended took theirs: this process's ten are left.
    expect((await readdir(dir)).length).toBe(10);
  });

  it('give the uid asked for when it is free, another when a live lease holds it, and the same again once released', async () => {
    const dir = await tempDir('genesis-uid-leases-');
    const range = { first: 300_000, count: 50 };
    const first = leaseUid(300_007, { dir, range });
    expect(first.uid).toBe(300_007);
    const second = leaseUid(300_007, { dir, range });
    expect(second.uid).not.toBe(300_007);
    first.release();
    first.release();
    expect(leaseUid(300_007, { dir, range }).uid).toBe(300_007);
    expect(await readdir(dir)).toHaveLength(2);
  });
});
