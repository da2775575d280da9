import { describe, expect, it } from 'vitest';
import { isNotMutated, mutableSources } from '../../../../../src/operations/calibrate/mutants/not-source.js';

describe('isNotMutated: what calibration makes no mutants of', () => {
  it('leaves type tests alone: tsd and TSTyche files, which the type checker runs and the test command never loads', () => {
    expect(isNotMutated('types/index.tst.ts')).toBe(true);
    expect(isNotMutated('types/index.test-d.ts')).toBe(true);
    expect(isNotMutated('index.test-d.tsx')).toBe(true);
  });

  it('leaves tests, benchmarks and dependencies alone, in either language', () => {
    for (const path of [
      'test/index.test.js',
      'src/a.spec.ts',
      'benchmarks/create.js',
      'bench/x.js',
      'node_modules/a/index.js',
      'gyp/pylib/gyp/common_test.py',
      'tests/test_x.py',
      'conftest.py',
    ]) {
      expect(isNotMutated(path), path).toBe(true);
    }
  });

  it('mutates the sources, including ones whose names only contain a test word, and compiled code in the tree', () => {
    for (const path of [
      'index.js',
      'dist/index.js',
      'lib/index.js',
      'types/index.d.ts.js',
      'src/testing-utils.ts',
      'src/contest.ts',
      'gyp/pylib/gyp/common.py',
      'latest.py',
      'src/tstyche.ts',
    ]) {
      expect(isNotMutated(path), path).toBe(false);
    }
  });

  it("mutableSources counts only the head's files: the gate's own canary probe, which the coverage run reports, is none of them", () => {
    const isSource = mutableSources(['lib/index.js', 'test/index.js', 'world.yaml', 'src/keep.js'], ['src/keep.js']);
    expect(isSource('lib/index.js')).toBe(true);
    expect(isSource('.genesis-canary/node.cjs')).toBe(false);
    expect(isSource('test/index.js')).toBe(false);
    expect(isSource('world.yaml')).toBe(false);
    expect(isSource('src/keep.js')).toBe(false);
  });
});
