import { describe, expect, it } from 'vitest';
import { manifestSchema } from '../../../../src/manifest/schema.js';
import { adviceFor, classifyRejection } from '../../../../src/operations/calibrate/rejection-cause.js';

const manifest = manifestSchema.parse({
  name: 'w',
  goal: { outcome: 'x' },
  verify: { test: 'npm test', timeoutSec: 120 },
  agent: { kind: 'script', script: 'r.yaml' },
  protected: ['world.yaml', 'test/**'],
});

describe('the cause of a rejected replay', () => {
  it('tells each cause from the reason and the log', () => {
    expect(classifyRejection({ reason: 'test-failed', message: '', log: 'Error: getaddrinfo EAI_AGAIN registry.example' })).toBe('network');
    expect(classifyRejection({ reason: 'test-failed', message: '', log: 'sh: 1: python3: not found' })).toBe('tool-missing');
    expect(classifyRejection({ reason: 'test-failed', message: '', log: 'bash: jq: command not found' })).toBe('tool-missing');
    expect(classifyRejection({ reason: 'gate-timeout', message: '', log: '' })).toBe('timeout');
    expect(classifyRejection({ reason: 'gate-oom', message: '', log: '' })).toBe('out-of-memory');
    expect(classifyRejection({ reason: 'no-tests-ran', message: '', log: '' })).toBe('report-unread');
    expect(classifyRejection({ reason: 'tests-vanished', message: '', log: '' })).toBe('genesis-rule');
    expect(classifyRejection({ reason: 'protected-path', message: '', log: '' })).toBe('genesis-rule');
    expect(classifyRejection({ reason: 'test-failed', message: '', log: 'not ok 3', passedOnRerun: true })).toBe('flaky');
    expect(classifyRejection({ reason: 'broken-base', message: '', log: '' })).toBe('base-fails');
    expect(classifyRejection({ reason: 'test-failed', message: '', log: 'not ok 3 - adds' })).toBe('tests-fail');
    expect(classifyRejection({ reason: 'test-failed', message: '', log: 'Test timed out in 5000ms.', perTestTimeouts: true })).toBe('timeout');
    expect(classifyRejection({ reason: 'test-failed', message: '', log: '', perTestTimeouts: true, passedOnRerun: true })).toBe('flaky');
  });

  it("says what to change in world.yaml, in the world's own values", () => {
    expect(adviceFor('timeout', manifest, ['gate-timeout'])).toContain('verify.timeoutSec (now 120s');
    expect(adviceFor('timeout', manifest, ['test-failed'])).toContain("runner's own per-test limit");
    expect(adviceFor('timeout', manifest, ['test-failed'])).not.toContain('verify.timeoutSec');
    expect(adviceFor('network', manifest, ['test-failed'])).toContain('verify.deps');
    expect(adviceFor('tool-missing', manifest, ['test-failed'])).toContain('verify.image');
    expect(adviceFor('genesis-rule', manifest, ['protected-path'])).toContain('protected: covers (world.yaml, test/**)');
    expect(adviceFor('genesis-rule', manifest, ['tests-vanished'])).toContain('no file the commit edited defines them');
  });
});
