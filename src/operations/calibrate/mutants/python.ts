import { balanced, integerSites, operatorSites, replacedAt, type MutationSite } from './site.js';

/** A Python source (a stub file `.pyi` has no behaviour to change). */
export const PYTHON = /\.py$/;

const OPERATORS: ReadonlyArray<readonly [string, string]> = [
  [' == ', ' != '],
  [' != ', ' == '],
  [' <= ', ' < '],
  [' >= ', ' > '],
  [' < ', ' <= '],
  [' > ', ' >= '],
  [' and ', ' or '],
  [' or ', ' and '],
  [' is not ', ' is '],
  [' + ', ' - '],
  [' - ', ' + '],
  [' * ', ' / '],
  [' // ', ' / '],
  [' += ', ' -= '],
  [' -= ', ' += '],
];

/** Lines that declare, import or open a block without a condition: nothing on them is a plausible slip that still runs. */
const NOT_A_STATEMENT = /^(def|async\s+def|class|import|from|global|nonlocal|pass|else\s*:|try\s*:|finally\s*:|except\b|with\b|for\b|async\s+(for|with)\b|@)/;

/**
 * Every mutation of a Python source on the lines given (the lines its tests execute): comparisons
 * flipped, `and`/`or` and arithmetic swapped, whole numbers and `True`/`False` changed, a
 * condition negated, a value returned replaced by `None`, and a simple statement replaced by
 * `pass` (which keeps the block's indentation valid). A scanner that sees strings, f-strings and
 * comments keeps every change outside them, and only lines that begin a statement at bracket depth
 * zero are removed or have their return value changed, so each mutant still parses. Pure.
 */
export function findPythonSites(path: string, text: string, lines: ReadonlySet<number> | null): MutationSite[] {
  const sites: MutationSite[] = [];
  const source = text.split('\n');
  const masked = maskPython(text).split('\n');
  let depth = 0;
  let continued = false;
  let inString = false;
  source.forEach((original, index) => {
    const number = index + 1;
    const code = masked[index] ?? '';
    const startsStatement = depth === 0 && !continued && !inString;
    depth = Math.max(0, depth + bracketDelta(code));
    continued = /\\\s*$/.test(code);
    // A line that opens a triple-quoted string it does not close continues on the next.
    if ((code.match(/"""|'''/g) ?? []).length % 2 === 1) inString = !inString;
    if (lines && !lines.has(number)) return;
    const trimmed = code.trim();
    if (trimmed === '' || /^(def|async\s+def|class)\b|^@/.test(trimmed)) return;
    sites.push(...operatorSites(path, number, original, code, OPERATORS));
    for (let at = code.indexOf(' is '); at >= 0; at = code.indexOf(' is ', at + 1)) {
      if (!code.startsWith(' is not ', at)) sites.push(replacedAt(path, number, 'operator', original, at, ' is ', ' is not '));
    }
    sites.push(...integerSites(path, number, original, code));
    for (const match of code.matchAll(/(?<![\w.])(True|False)(?![\w])/g)) {
      sites.push(replacedAt(path, number, 'constant', original, match.index, match[1]!, match[1] === 'True' ? 'False' : 'True'));
    }
    if (!startsStatement || inString || continued || !balanced(code)) return;
    const indent = original.slice(0, original.length - original.trimStart().length);
    const condition = /^(if|elif|while)\s+(.+):\s*$/.exec(trimmed);
    if (condition && !condition[2]!.includes(':')) {
      const at = original.indexOf(condition[1]!) + condition[1]!.length;
      const colon = code.lastIndexOf(':');
      sites.push({
        path,
        line: number,
        kind: 'condition',
        before: original,
        after: `${original.slice(0, at)} not (${original.slice(at, colon).trim()})${original.slice(colon)}`,
      });
      return;
    }
    const returned = /^return\s+(.+)$/.exec(trimmed);
    if (returned && returned[1] !== 'None' && !trimmed.includes(';')) {
      sites.push({ path, line: number, kind: 'return', before: original, after: `${indent}return None` });
      return;
    }
    if (!trimmed.endsWith(':') && !trimmed.includes(';') && !NOT_A_STATEMENT.test(trimmed) && !/^(return|yield)\b/.test(trimmed) && /\w/.test(trimmed)) {
      sites.push({ path, line: number, kind: 'statement', before: original, after: `${indent}pass` });
    }
  });
  return sites;
}

function bracketDelta(code: string): number {
  let delta = 0;
  for (const c of code) {
    if (c === '(' || c === '[' || c === '{') delta += 1;
    else if (c === ')' || c === ']' || c === '}') delta -= 1;
  }
  return delta;
}

/**
 * The text with every character inside a string (single, triple-quoted, with any prefix) or a
 * comment replaced by a space, quotes and newlines kept, so offsets and line numbers stay.
 */
export function maskPython(text: string): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '#') {
      while (i < text.length && text[i] !== '\n') {
        out += ' ';
        i += 1;
      }
      continue;
    }
    if (c !== "'" && c !== '"') {
      out += c;
      i += 1;
      continue;
    }
    const quote = text.startsWith(c.repeat(3), i) ? c.repeat(3) : c;
    out += quote;
    i += quote.length;
    while (i < text.length && !text.startsWith(quote, i)) {
      // A single-quoted string ends at its line (an unterminated one is a syntax error anyway).
      if (text[i] === '\n' && quote.length === 1) break;
      // In a raw string too a backslash keeps the quote after it from ending the string.
      if (text[i] === '\\' && i + 1 < text.length) {
        out += text[i + 1] === '\n' ? ' \n' : '  ';
        i += 2;
        continue;
      }
      out += text[i] === '\n' ? '\n' : ' ';
      i += 1;
    }
    if (text.startsWith(quote, i)) {
      out += quote;
      i += quote.length;
    }
  }
  return out;
}
