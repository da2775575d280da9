import { describe, expect, it } from 'vitest';
import { imageIdOfSummary, recordImage, withImageInSummary } from '../../../src/gate/image.js';
import type { Sandbox, SandboxRunSpec } from '../../../src/sandbox/sandbox.js';

const ID = `sha256:${'ab12'.repeat(16)}`;
const OTHER = `sha256:${'cd34'.repeat(16)}`;

describe('the image in a gate summary', () => {
  it('names the image by name and id after the sandbox kind', () => {
    expect(withImageInSummary('docker: test ok 3 passed 0 failed (1.0s)', 'docker', { name: 'genesis/node:20', id: ID })).toBe(
      `docker genesis/node:20@${ID}: test ok 3 passed 0 failed (1.0s)`,
    );
  });

  it('leaves a summary without an image (bwrap, none) as it is', () => {
    expect(withImageInSummary('bwrap: test ok (1.0s)', 'bwrap', null)).toBe('bwrap: test ok (1.0s)');
  });

  it('reads the id back from a trailer, and nothing from one that names none', () => {
    expect(imageIdOfSummary(`docker genesis/node:20@${ID}: test ok (1.0s) (replayed on 0123456789ab)`)).toBe(ID);
    expect(imageIdOfSummary('docker: test ok (1.0s)')).toBeNull();
    expect(imageIdOfSummary('docker x@sha256:abc: short ids are not ids')).toBeNull();
    expect(imageIdOfSummary(null)).toBeNull();
  });
});

describe('recordImage', () => {
  const fake = (id: string | null): { sandbox: Sandbox; asked: Array<string | undefined> } => {
    const asked: Array<string | undefined> = [];
    const sandbox: Sandbox = {
      kind: 'docker',
      check: async () => undefined,
      run: async (spec: SandboxRunSpec) => {
        asked.push(spec.image);
        return {
          exitCode: 0,
          timedOut: false,
          oomKilled: false,
          output: '',
          outputBytes: 0,
          truncated: false,
          durationMs: 1,
          ...(id ? { image: { name: spec.image ?? '?', id } } : {}),
        };
      },
    };
    return { sandbox, asked };
  };
  const spec = { command: 'true', workDir: '/tmp', timeoutMs: 1000, limits: { cpus: 1, memoryMb: 64, pids: 16 }, image: 'genesis/node:20' };

  it('keeps the first image a run reports', async () => {
    const recording = recordImage(fake(ID).sandbox);
    expect(recording.image()).toBeNull();
    await recording.sandbox.run(spec);
    expect(recording.image()).toEqual({ name: 'genesis/node:20', id: ID });
  });

  it('runs every step in the image it is given instead of the one asked for', async () => {
    const inner = fake(OTHER);
    const recording = recordImage(inner.sandbox, OTHER);
    await recording.sandbox.run(spec);
    await recording.sandbox.run(spec);
    expect(inner.asked).toEqual([OTHER, OTHER]);
    expect(recording.image()?.id).toBe(OTHER);
  });

  it('records nothing for a sandbox that has no images', async () => {
    const recording = recordImage(fake(null).sandbox);
    await recording.sandbox.run(spec);
    expect(recording.image()).toBeNull();
  });
});
