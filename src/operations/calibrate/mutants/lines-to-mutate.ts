import type { MutationLanguage } from './languages.js';

/**
 * Which lines of a source calibration may mutate, given the coverage run's executed lines (null
 * when the suite wrote none): a Set of lines, `null` for every line, `undefined` for none (skip
 * the file). `isSource` says which reported paths are sources calibration mutates.
 *
 * A file the coverage run did not report is skipped, except TypeScript whose coverage could not be
 * placed on it, which is mutated on every line: a runner's transform with no source map (ts-jest
 * under a tsconfig with `sourceMap: false`), or evaluated where the preload could not see it (a
 * test command that replaced NODE_OPTIONS; what vitest's four pools and jest, its ESM mode too,
 * evaluate by vm is seen). That exception holds only while coverage placed no line on any source:
 * once it did, the tests are seen running the project's code, and TypeScript they never loaded
 * is not what runs (a package published with its compiled JavaScript beside the TypeScript it came
 * from, whose tests load the JavaScript): every mutant of it would survive for nothing. Pure.
 */
export function linesToMutate(
  executed: ReadonlyMap<string, Set<number>> | null,
  isSource: (path: string) => boolean,
): (path: string, language: MutationLanguage) => Set<number> | null | undefined {
  if (executed === null) return () => null;
  const placedOnSources = [...executed].some(([path, lines]) => lines.size > 0 && isSource(path));
  return (path, language) => executed.get(path) ?? (language.unreported === 'every-line' && !placedOnSources ? null : undefined);
}
