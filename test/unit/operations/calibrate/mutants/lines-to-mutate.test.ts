import { describe, expect, it } from 'vitest';
import { mutationLanguageOf } from '../../../../../src/operations/calibrate/mutants/languages.js';
import { linesToMutate } from '../../../../../src/operations/calibrate/mutants/lines-to-mutate.js';
import { isNotMutated } from '../../../../../src/operations/calibrate/mutants/not-source.js';

const isSource = (path: string) => mutationLanguageOf(path) !== undefined && !isNotMutated(path);
const language = (path: string) => {
  const found = mutationLanguageOf(path);
  if (!found) throw new Error(`no language for ${path}`);
  return found;
};

describe('linesToMutate: the lines of a source calibration may mutate', () => {
  it('takes the executed lines of a reported file, and skips unreported JavaScript and Python', () => {
    const of = linesToMutate(new Map([['lib/index.js', new Set([1, 2])]]), isSource);
    expect(of('lib/index.js', language('lib/index.js'))).toEqual(new Set([1, 2]));
    expect(of('lib/unused.js', language('lib/unused.js'))).toBeUndefined();
    expect(of('tool.py', language('tool.py'))).toBeUndefined();
  });

  it('mutates every line of TypeScript the coverage could not see, when it placed no line on any source (a runner that transforms it where the preload does not see)', () => {
    const of = linesToMutate(new Map([['test/clamp.test.ts', new Set([1])]]), isSource);
    expect(of('src/clamp.ts', language('src/clamp.ts'))).toBeNull();
  });

  it("skips unreported TypeScript once coverage placed lines on the project's compiled JavaScript: its tests run that, not the TypeScript", () => {
    // zod's published package: src/v4/classic/schemas.ts beside v4/classic/schemas.js, which its tests load.
    const of = linesToMutate(new Map([['v4/classic/schemas.js', new Set([10, 11])]]), isSource);
    expect(of('src/v4/classic/schemas.ts', language('src/v4/classic/schemas.ts'))).toBeUndefined();
    expect(of('v4/classic/schemas.js', language('v4/classic/schemas.js'))).toEqual(new Set([10, 11]));
  });

  it('does not count a reported file with no executed line, or a test, as coverage placed on a source', () => {
    const of = linesToMutate(
      new Map([
        ['vitest.config.js.timestamp-1.mjs', new Set<number>()],
        ['test/helper.js', new Set([1])],
      ]),
      isSource,
    );
    expect(of('src/clamp.ts', language('src/clamp.ts'))).toBeNull();
  });

  it('mutates every line of every source when the suite wrote no coverage at all', () => {
    expect(linesToMutate(null, isSource)('lib/index.js', language('lib/index.js'))).toBeNull();
  });
});
