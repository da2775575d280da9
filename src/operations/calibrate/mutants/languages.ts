import { findJavaScriptSites, TYPESCRIPT } from './javascript.js';
import { findPythonSites, PYTHON } from './python.js';
import type { MutationSite } from './site.js';

/** The mutation operators of one language, and what calibration may know of which lines run. */
export interface MutationLanguage {
  name: 'javascript' | 'typescript' | 'python';
  /** Whether a path is a source of this language. */
  matches: (path: string) => boolean;
  /**
   * What to do with a file the coverage run did not report: `skip` it (its tests never load it, so
   * any mutant of it survives for nothing), or mutate `every-line` of it (its runner's coverage
   * cannot be placed on the file, so d is then a lower bound), while the coverage run placed no
   * line on any source (lines-to-mutate.ts).
   */
  unreported: 'skip' | 'every-line';
  /** Sites on the lines given (every line when null). Pure. */
  findSites: (path: string, text: string, lines: ReadonlySet<number> | null) => MutationSite[];
}

/** The languages Genesis makes mutants of, each a module of its own operators. */
export const MUTATION_LANGUAGES: readonly MutationLanguage[] = [
  { name: 'typescript', matches: (p) => TYPESCRIPT.test(p), unreported: 'every-line', findSites: findJavaScriptSites },
  { name: 'javascript', matches: (p) => /\.(c|m)?js$/.test(p), unreported: 'skip', findSites: findJavaScriptSites },
  { name: 'python', matches: (p) => PYTHON.test(p), unreported: 'skip', findSites: findPythonSites },
];

/** The language a path is a source of, if Genesis mutates it. */
export function mutationLanguageOf(path: string): MutationLanguage | undefined {
  return MUTATION_LANGUAGES.find((language) => language.matches(path));
}
