import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { ZodError } from 'zod';
import { GenesisError } from '../../../src/errors/genesis-error.js';
import type { EpisodeJob, EpisodeResult } from '../../../src/episode/episode-job.js';
import { MemoryEpisodeQueue } from '../../../src/queue/memory/memory-queue.js';
import type { EpisodeHandler } from '../../../src/queue/episode-queue.js';
import { BASE, job, nextWithin, passed } from '../../helpers/episode-jobs.js';

async function results(queue: MemoryEpisodeQueue, n: number): Promise<EpisodeResult[]> {
  const out: EpisodeResult[] = [];
  for (let i = 0; i < n; i++) out.push(await queue.nextResult());
  return out;
}

describe('MemoryEpisodeQueue', () => {
  it('runs a job and hands back its result', async () => {
    const queue = new MemoryEpisodeQueue(async (j) => passed(j), 1);
    const j = job();
    await queue.submit(j);
    expect(await queue.nextResult()).toEqual(passed(j));
    await queue.close();
  });

  it('stops one job when asked (a racer outrun): a running one is aborted, a waiting one never starts, the others run on', async () => {
    const handler: EpisodeHandler = (j, signal) =>
      sleep(j.task === 'slow' ? 60_000 : 20, undefined, { signal }).then(
        () => passed(j),
        () => ({ ...passed(j), verdict: 'abandoned' as const, candidate: null, reason: 'aborted' as const }),
      );
    const queue = new MemoryEpisodeQueue(handler, 1);
    const [slow, waiting, other] = [job('slow'), job('waiting'), job('other')];
    for (const j of [slow, waiting, other]) await queue.submit(j);
    await queue.cancel(waiting.episodeId);
    await queue.cancel(slow.episodeId);
    const got = await results(queue, 3);
    expect(got.map((r) => [r.task, r.verdict])).toEqual([
      ['waiting', 'abandoned'],
      ['slow', 'abandoned'],
      ['other', 'passed'],
    ]);
    await queue.close();
  });

  it('never runs more handlers at once than its concurrency, and uses all of it', async () => {
    let active = 0;
    let maxActive = 0;
    const handler: EpisodeHandler = async (j) => {
      active++;
      maxActive = Math.max(maxActive, active);
      await sleep(5 + Math.floor(Math.random() * 10));
      active--;
      return passed(j);
    };
    const queue = new MemoryEpisodeQueue(handler, 3);
    const jobs = Array.from({ length: 12 }, (_, i) => job(`t${i}`));
    for (const j of jobs) await queue.submit(j);
    expect(queue.counts()).toEqual({ waiting: 9, active: 3 });
    const got = await results(queue, jobs.length);
    expect(maxActive).toBe(3);
    expect(got.map((r) => r.episodeId).sort()).toEqual(jobs.map((j) => j.episodeId).sort());
    expect(queue.counts()).toEqual({ waiting: 0, active: 0 });
    await queue.close();
  });

  it('delivers results in completion order, not submission order', async () => {
    const delays: Record<string, number> = { slow: 40, fast: 1 };
    const queue = new MemoryEpisodeQueue(async (j) => {
      await sleep(delays[j.task]!);
      return passed(j);
    }, 2);
    await queue.submit(job('slow'));
    await queue.submit(job('fast'));
    expect((await results(queue, 2)).map((r) => r.task)).toEqual(['fast', 'slow']);
    await queue.close();
  });

  it('runs a job submitted twice only once', async () => {
    let calls = 0;
    const queue = new MemoryEpisodeQueue(async (j) => {
      calls++;
      return passed(j);
    }, 2);
    const j = job();
    await queue.submit(j);
    await queue.submit({ ...j });
    expect(await queue.nextResult()).toMatchObject({ episodeId: j.episodeId });
    await queue.submit(j);
    expect(await nextWithin(queue, 30)).toBe('nothing');
    expect(calls).toBe(1);
    await queue.close();
  });

  it('yields exactly one result per job', async () => {
    const queue = new MemoryEpisodeQueue(async (j) => {
      await sleep(1);
      return passed(j);
    }, 4);
    const jobs = Array.from({ length: 20 }, () => job());
    await Promise.all(jobs.map((j) => queue.submit(j)));
    const got = await results(queue, 20);
    expect(new Set(got.map((r) => r.episodeId)).size).toBe(20);
    expect(await nextWithin(queue, 30)).toBe('nothing');
    await queue.close();
  });

  it('serves takers that were waiting before the result existed', async () => {
    const queue = new MemoryEpisodeQueue(async (j) => {
      await sleep(5);
      return passed(j);
    }, 1);
    const first = queue.nextResult();
    const second = queue.nextResult();
    const a = job('a');
    const b = job('b');
    await queue.submit(a);
    await queue.submit(b);
    expect((await first).episodeId).toBe(a.episodeId);
    expect((await second).episodeId).toBe(b.episodeId);
    await queue.close();
  });

  describe('when a handler fails', () => {
    it('turns a thrown GenesisError into a failed result carrying its code', async () => {
      const queue = new MemoryEpisodeQueue(async () => {
        throw new GenesisError('git-failed', 'git clone failed: disk full');
      }, 1);
      const j = job();
      await queue.submit(j);
      expect(await queue.nextResult()).toEqual({
        episodeId: j.episodeId,
        task: j.task,
        attempt: j.attempt,
        base: BASE,
        candidate: null,
        verdict: 'failed',
        reason: 'git-failed',
        message: 'git clone failed: disk full',
        signature: 'worker-error:git-failed',
        fatal: false,
      });
      await queue.close();
    });

    it('stops the run on a fatal code, without charging the task, and names the fix', async () => {
      const queue = new MemoryEpisodeQueue(async () => {
        throw new GenesisError('sandbox-image-missing', 'The sandbox image genesis/nope:1 does not exist.', { hint: 'build it' });
      }, 1);
      await queue.submit(job());
      expect(await queue.nextResult()).toMatchObject({
        verdict: 'abandoned',
        reason: 'sandbox-image-missing',
        fatal: true,
        message: 'The sandbox image genesis/nope:1 does not exist. (build it)',
      });
      await queue.close();
    });

    it('gives back a transient failure as abandoned and not fatal, whatever its code starts with', async () => {
      const queue = new MemoryEpisodeQueue(async () => {
        throw new GenesisError('agent-sandbox-failed', 'docker could not start the container', { hint: 'check docker' });
      }, 1);
      await queue.submit(job());
      expect(await queue.nextResult()).toMatchObject({
        verdict: 'abandoned',
        reason: 'agent-sandbox-failed',
        fatal: false,
        message: 'docker could not start the container',
      });
      await queue.close();
    });

    it('reads the traits of a GenesisError rebuilt from another copy of the module from its code', async () => {
      const queue = new MemoryEpisodeQueue(async () => {
        throw Object.assign(new Error('The Docker daemon does not answer'), { name: 'GenesisError', code: 'docker-unavailable' });
      }, 1);
      await queue.submit(job());
      expect(await queue.nextResult()).toMatchObject({ verdict: 'abandoned', reason: 'docker-unavailable', fatal: false });
      await queue.close();
    });

    it("treats an error whose code is not registered (ENOENT) as the worker's own error", async () => {
      const queue = new MemoryEpisodeQueue(async () => {
        throw Object.assign(new Error('no such file'), { code: 'ENOENT' });
      }, 1);
      await queue.submit(job());
      expect(await queue.nextResult()).toMatchObject({ verdict: 'failed', reason: 'worker-error', fatal: false, signature: 'worker-error:ENOENT' });
      await queue.close();
    });

    it('reports worker-error for a thrown error without a code', async () => {
      const queue = new MemoryEpisodeQueue(async () => {
        throw new TypeError('x is undefined');
      }, 1);
      await queue.submit(job());
      expect(await queue.nextResult()).toMatchObject({
        verdict: 'failed',
        reason: 'worker-error',
        message: 'x is undefined',
        signature: 'worker-error:worker-error',
      });
      await queue.close();
    });

    it('reports worker-error for a thrown value that is not an Error', async () => {
      const queue = new MemoryEpisodeQueue(async () => {
        throw 'plain string';
      }, 1);
      await queue.submit(job());
      expect(await queue.nextResult()).toMatchObject({ verdict: 'failed', reason: 'worker-error', message: 'plain string' });
      await queue.close();
    });

    it('refuses a result that breaks the schema as a failed result', async () => {
      const queue = new MemoryEpisodeQueue(async (j) => ({ ...passed(j), verdict: 'great' }) as unknown as EpisodeResult, 1);
      const j = job();
      await queue.submit(j);
      const result = await queue.nextResult();
      expect(result).toMatchObject({ episodeId: j.episodeId, verdict: 'failed', reason: 'worker-error', candidate: null });
      expect(result.message).toContain('verdict');
      await queue.close();
    });

    it('reads a reason this version does not know (a worker of another version) as worker-error, keeping the verdict and message', async () => {
      const queue = new MemoryEpisodeQueue(
        async (j) => ({ ...passed(j), verdict: 'rejected', reason: 'made-up-reason', message: 'it said why' }) as unknown as EpisodeResult,
        1,
      );
      await queue.submit(job());
      expect(await queue.nextResult()).toMatchObject({ verdict: 'rejected', reason: 'worker-error', message: 'it said why' });
      await queue.close();
    });

    it('keeps running the next jobs after a handler failed', async () => {
      let n = 0;
      const queue = new MemoryEpisodeQueue(async (j) => {
        if (n++ === 0) throw new Error('first fails');
        return passed(j);
      }, 1);
      await queue.submit(job());
      await queue.submit(job());
      expect((await results(queue, 2)).map((r) => r.verdict)).toEqual(['failed', 'passed']);
      await queue.close();
    });

    it('turns a handler that throws before returning a promise into a failed result', async () => {
      const handler = ((): Promise<EpisodeResult> => {
        throw new GenesisError('export-failed', 'refused synchronously');
      }) as EpisodeHandler;
      const queue = new MemoryEpisodeQueue(handler, 1);
      const j = job();
      await queue.submit(j).catch(() => undefined);
      expect(await nextWithin(queue, 200)).toMatchObject({ episodeId: j.episodeId, verdict: 'failed', reason: 'export-failed' });
      await queue.close();
    });
  });

  describe('when a job is invalid', () => {
    const cases: Array<[string, Partial<Record<keyof EpisodeJob, unknown>> & Record<string, unknown>, string]> = [
      ['a malformed episode id', { episodeId: 'episode-1' }, 'episodeId'],
      ['a short base commit', { base: 'abc123' }, 'base'],
      ['an upper-case base commit', { base: BASE.toUpperCase() }, 'base'],
      ['attempt zero', { attempt: 0 }, 'attempt'],
      ['an empty task', { task: '' }, 'task'],
      ['an unknown field', { extra: true }, ''],
    ];
    for (const [what, change, path] of cases) {
      it(`refuses ${what} with a ZodError and runs nothing`, async () => {
        let calls = 0;
        const queue = new MemoryEpisodeQueue(async (j) => {
          calls++;
          return passed(j);
        }, 1);
        const error = await queue.submit({ ...job(), ...change } as EpisodeJob).then(
          () => null,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(ZodError);
        expect((error as ZodError).issues.map((i) => i.path.join('.'))).toEqual([path]);
        expect(queue.counts()).toEqual({ waiting: 0, active: 0 });
        expect(calls).toBe(0);
        await queue.close();
      });
    }
  });

  describe('when the queue closes', () => {
    it('aborts running handlers through their signal and waits for them', async () => {
      const signals: AbortSignal[] = [];
      let returned = 0;
      const handler: EpisodeHandler = (j, signal) =>
        new Promise((resolve) => {
          signals.push(signal);
          signal.addEventListener('abort', () => {
            returned++;
            resolve({ ...passed(j), candidate: null, verdict: 'abandoned', reason: 'aborted', message: 'stopped' });
          });
        });
      const queue = new MemoryEpisodeQueue(handler, 2);
      const running = [job('a'), job('b')];
      for (const j of running) await queue.submit(j);
      expect(signals.map((s) => s.aborted)).toEqual([false, false]);
      await queue.close();
      expect(signals.map((s) => s.aborted)).toEqual([true, true]);
      expect(returned).toBe(2);
      const got = await results(queue, 2);
      expect(got.map((r) => r.verdict)).toEqual(['abandoned', 'abandoned']);
      expect(got.map((r) => r.episodeId).sort()).toEqual(running.map((j) => j.episodeId).sort());
    });

    it('returns an abandoned result for every job still waiting, and never starts it', async () => {
      const started: string[] = [];
      const handler: EpisodeHandler = (j, signal) =>
        new Promise((resolve) => {
          started.push(j.task);
          signal.addEventListener('abort', () => resolve(passed(j)));
        });
      const queue = new MemoryEpisodeQueue(handler, 1);
      const running = job('running');
      const waiting = [job('w1'), job('w2')];
      await queue.submit(running);
      for (const j of waiting) await queue.submit(j);
      expect(queue.counts()).toEqual({ waiting: 2, active: 1 });
      await queue.close();
      const got = await results(queue, 3);
      expect(started).toEqual(['running']);
      expect(got.slice(0, 2)).toEqual(
        waiting.map((j) => ({
          episodeId: j.episodeId,
          task: j.task,
          attempt: 1,
          base: BASE,
          candidate: null,
          verdict: 'abandoned',
          reason: 'aborted',
          message: 'the queue closed before the episode started',
          signature: null,
        })),
      );
      expect(got[2]).toMatchObject({ episodeId: running.episodeId });
      expect(queue.counts()).toEqual({ waiting: 0, active: 0 });
      expect(await nextWithin(queue, 30)).toBe('nothing');
    });

    it('resolves at once when nothing is running, and may be called twice', async () => {
      const queue = new MemoryEpisodeQueue(async (j) => passed(j), 1);
      await queue.close();
      await queue.close();
      expect(queue.counts()).toEqual({ waiting: 0, active: 0 });
    });

    it('does not leave a job submitted after close without a result', async () => {
      const queue = new MemoryEpisodeQueue(async (j) => passed(j), 1);
      await queue.close();
      const j = job();
      const refused = await queue.submit(j).then(
        () => false,
        () => true,
      );
      if (!refused) expect(await nextWithin(queue, 200)).toMatchObject({ episodeId: j.episodeId, verdict: 'abandoned' });
      expect(queue.counts().waiting).toBe(0);
    });
  });
});
