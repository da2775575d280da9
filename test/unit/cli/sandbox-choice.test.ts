import { describe, expect, it } from 'vitest';
import { resolveSandboxChoice } from '../../../src/cli/sandbox-choice.js';

describe('the sandbox run and amend use', () => {
  it('takes the flag over everything, then an explicit verify.sandbox, then the choice made at init, then auto', () => {
    expect(resolveSandboxChoice({ flag: 'docker', manifest: 'bwrap', atInit: 'none' })).toMatchObject({ choice: 'docker', why: '--sandbox docker' });
    expect(resolveSandboxChoice({ manifest: 'docker', atInit: 'bwrap' })).toMatchObject({ choice: 'docker', why: 'verify.sandbox: docker in world.yaml' });
    expect(resolveSandboxChoice({ manifest: 'auto', atInit: 'bwrap' })).toMatchObject({
      choice: 'bwrap',
      why: expect.stringContaining('genesis init --sandbox bwrap'),
    });
    expect(resolveSandboxChoice({ manifest: 'auto', atInit: null })).toMatchObject({ choice: 'auto', why: expect.stringContaining('verify.sandbox: auto') });
  });
});
