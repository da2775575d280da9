import { fileURLToPath } from 'node:url';
import { cliName } from './invocation.js';

/** src/cli and dist/cli both sit two levels below the package root, beside worlds/. */
const CALC = fileURLToPath(new URL('../../worlds/calc', import.meta.url));

/**
 * The examples `genesis --help` ends with. Each line runs as printed, in order, from the
 * directory the help was printed in (a test runs them): the invocation is the one that works
 * there (see cliName) and the example world's path is absolute.
 */
export function helpExamples(): string {
  const g = cliName();
  const calc = /\s/.test(CALC) ? JSON.stringify(CALC) : CALC;
  const rows: Array<[string, string]> = [
    [`${g} init --world calc.world --from ${calc}`, 'a world: a bare repository whose first commit passed the gate'],
    [`${g} run --world calc.world`, 'episodes until done, a budget is spent, or what is left is blocked'],
    [`${g} log --world calc.world`, 'the accepted history with its evidence'],
    [`${g} show --world calc.world HEAD`, 'the episode behind the last accepted commit'],
    ['git clone -q calc.world calc && echo "Answers are exact." > calc/NOTES.md', "a person's change, in a clone"],
    [`${g} amend --world calc.world --from calc --message "add notes" --dry-run`, "its diff and the gate's verdict (drop --dry-run to land it)"],
    [`${g} audit --world calc.world`, 'check every invariant of the accepted history'],
    [`${g} model horizon --p 0.99`, 'how far a chain of steps gets at 99% per step'],
  ];
  const width = Math.max(...rows.map(([cmd]) => cmd.length));
  const install = g === 'genesis' ? '' : ' (after npm link in the checkout, plain `genesis` works too)';
  return `\nExamples, each runs as printed, in order, from this directory${install}:\n${rows.map(([cmd, why]) => `  ${cmd.padEnd(width)}  # ${why}`).join('\n')}\n`;
}
