import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GenesisError } from '../../../src/errors/genesis-error.js';
import { ERROR_CODES, errorTraits, isErrorCode } from '../../../src/errors/error-codes.js';
import { isChargedReason, isEpisodeReason, reasonOnTip, reasonTraits, REJECTION_REASONS } from '../../../src/errors/rejection-reasons.js';
import { charged, fatal, inconsistentTraits, refused, transient } from '../../../src/errors/traits.js';

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile() && e.name.endsWith('.ts')).map((e) => join(e.parentPath, e.name));
}

describe('the registry of error codes', () => {
  it('is consistent: nothing both retryable and fatal, nothing charged that is transient or fatal', () => {
    expect(inconsistentTraits(ERROR_CODES)).toEqual([]);
  });

  it('finds an inconsistent table', () => {
    const both = { ...transient('x'), fatal: true };
    expect(
      inconsistentTraits({ 'ok-code': charged('fine'), 'both-code': both, Bad_Name: refused('n'), 'charged-fatal': { ...fatal('y'), charged: true } }),
    ).toEqual(['both-code: both retryable and fatal', 'Bad_Name: not kebab-case', 'charged-fatal: charged, yet fatal']);
  });

  it('lists only codes that some source file uses', async () => {
    const files = (await sourceFiles('src')).filter((f) => !f.includes(`${join('src', 'vocabulary')}`));
    const text = (await Promise.all(files.map((f) => readFile(f, 'utf8')))).join('\n');
    const unused = Object.keys(ERROR_CODES).filter((code) => !text.includes(`'${code}'`));
    expect(unused).toEqual([]);
  });

  it('gives a GenesisError the traits of its code', () => {
    expect(new GenesisError('docker-unavailable', 'down')).toMatchObject({ retryable: true, fatal: false, charged: false });
    expect(new GenesisError('sandbox-image-missing', 'gone')).toMatchObject({ retryable: false, fatal: true, charged: false });
    expect(new GenesisError('git-failed', 'exit 128')).toMatchObject({ retryable: false, fatal: false, charged: true });
  });

  it('tells registered codes from other strings', () => {
    expect(isErrorCode('agent-not-found')).toBe(true);
    expect(isErrorCode('ENOENT')).toBe(false);
    expect(isErrorCode('toString')).toBe(false);
    expect(errorTraits('agent-not-found').fatal).toBe(true);
  });

  it('does not call an agent code fatal for its name: a transient agent failure is retried', () => {
    expect(errorTraits('agent-sandbox-failed')).toMatchObject({ retryable: true, fatal: false });
    expect(errorTraits('bwrap-unavailable')).toMatchObject({ fatal: true });
  });
});

describe('the registry of rejection reasons', () => {
  it('is consistent', () => {
    expect(inconsistentTraits(REJECTION_REASONS)).toEqual([]);
    for (const t of Object.values(REJECTION_REASONS)) expect(t.fatal).toBe(false);
  });

  it('reads a reason found on the tip through the reason itself unless it has a line of its own', () => {
    expect(reasonTraits('replay-test-failed')).toEqual(REJECTION_REASONS['test-failed']);
    expect(reasonTraits('replay-broken-base')?.charged).toBe(false);
    expect(reasonTraits('replay-worker-lost')?.charged).toBe(false);
    expect(reasonTraits('worker-lost')?.charged).toBe(true);
    expect(reasonTraits('replay-replay-test-failed')).toBeNull();
    expect(reasonTraits('replay-')).toBeNull();
  });

  it('reads an error code as a reason (a worker error ends an episode with it)', () => {
    expect(reasonTraits('docker-unavailable')).toEqual(ERROR_CODES['docker-unavailable']);
  });

  it('names a rejection on the tip after the reason, unless only the tip gives it', () => {
    expect(reasonOnTip('test-failed')).toBe('replay-test-failed');
    expect(reasonOnTip('broken-base')).toBe('replay-broken-base');
    expect(reasonOnTip('worker-lost')).toBe('replay-worker-lost');
    for (const own of ['replay-conflict', 'replay-empty', 'task-removed', 'unverified-result', 'replay-test-failed'] as const)
      expect(reasonOnTip(own)).toBe(own);
    expect(reasonTraits(reasonOnTip('score-fell'))).toEqual(REJECTION_REASONS['score-fell']);
  });

  it('knows a reason, a reason on the tip and an error code as episode reasons, and nothing else', () => {
    for (const known of ['test-failed', 'replay-test-failed', 'replay-conflict', 'docker-unavailable']) expect(isEpisodeReason(known)).toBe(true);
    for (const unknown of ['replay-', 'replay-replay-test-failed', 'replay-docker-unavailable', 'made-up', 'constructor', 42, null])
      expect(isEpisodeReason(unknown)).toBe(false);
  });

  it('charges what it does not know, as records of older versions always were', () => {
    expect(reasonTraits('some-reason-of-the-future')).toBeNull();
    expect(isChargedReason('some-reason-of-the-future')).toBe(true);
    expect(isChargedReason('broken-base')).toBe(false);
    expect(isChargedReason('aborted')).toBe(false);
    expect(isChargedReason('test-failed')).toBe(true);
  });
});
