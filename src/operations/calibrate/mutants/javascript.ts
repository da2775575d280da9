import { balanced, integerSites, matchingParen, operatorSites, replacedAt, type MutationSite } from './site.js';

const OPERATORS: ReadonlyArray<readonly [string, string]> = [
  [' === ', ' !== '],
  [' !== ', ' === '],
  [' == ', ' != '],
  [' != ', ' == '],
  [' <= ', ' < '],
  [' >= ', ' > '],
  [' < ', ' <= '],
  [' > ', ' >= '],
  [' && ', ' || '],
  [' || ', ' && '],
  [' + ', ' - '],
  [' - ', ' + '],
  [' * ', ' / '],
];

const DECLARATION = /^(var|let|const|function|class|import|export|case|default|else|return\s*;|\}|\{|\/\/|\*)/;

/** A TypeScript source: its types are gone when it runs, so a mutant of a type changes nothing. */
export const TYPESCRIPT = /(?<!\.d)\.[cm]?tsx?$/;

/**
 * A TypeScript line that only declares a type (an alias, an interface, a declaration, or a member
 * or index signature): mutating or removing it changes no behaviour, so it would count as a
 * mutant the tests missed when there was nothing to catch.
 */
const TYPE_ONLY = [
  /^(export\s+)?(declare\s|type\s+[\w$]+|interface\s|abstract\s+[\w$]+\s*\()/,
  /^((readonly|private|public|protected|static|declare|abstract|override)\s+)*[\w$]+\??(\s*<[^>]*>)?(\s*\([^)]*\))?\s*:\s*[^=]+;$/,
  /^(readonly\s+)?\[[^\]]*\]\??\s*:\s*[^=]+;$/,
];

/**
 * Every mutation of a JavaScript source on the lines given (the lines its tests execute), found
 * by a scanner that sees strings, template literals and comments, so none is made inside them.
 * Deliberately textual: each mutant must still parse, and a change a person could plausibly make
 * by mistake is what the gate is measured on. Pure.
 */
export function findJavaScriptSites(path: string, text: string, lines: ReadonlySet<number> | null): MutationSite[] {
  const sites: MutationSite[] = [];
  const source = text.split('\n');
  const typescript = TYPESCRIPT.test(path);
  const masked = maskNonCode(text).split('\n');
  source.forEach((original, index) => {
    const number = index + 1;
    if (lines && !lines.has(number)) return;
    const code = masked[index] ?? '';
    if (code.trim() === '' || /[/]/.test(code.replace(/ \/ /g, ''))) return; // a regex literal may hide there
    if (typescript && TYPE_ONLY.some((re) => re.test(code.trim()))) return;
    sites.push(...operatorSites(path, number, original, code, OPERATORS), ...integerSites(path, number, original, code));
    for (const match of code.matchAll(/(?<![\w$])(true|false)(?![\w$])/g)) {
      sites.push(replacedAt(path, number, 'constant', original, match.index, match[1]!, match[1] === 'true' ? 'false' : 'true'));
    }
    const condition = /\b(if|while)\s*\(/.exec(code);
    if (condition) {
      const open = condition.index + condition[0].length - 1;
      const close = matchingParen(code, open);
      if (close > open + 1) {
        const inner = original.slice(open + 1, close);
        sites.push({ path, line: number, kind: 'condition', before: original, after: `${original.slice(0, open + 1)}!(${inner})${original.slice(close)}` });
      }
    }
    const trimmed = code.trim();
    if (trimmed.endsWith(';') && !DECLARATION.test(trimmed) && balanced(code)) {
      sites.push({ path, line: number, kind: 'statement', before: original, after: '' });
    }
  });
  return sites;
}

/** The text with every character inside a string, template literal or comment replaced by a space (newlines kept), so offsets stay. */
export function maskNonCode(text: string): string {
  let out = '';
  let state: 'code' | 'line' | 'block' | "'" | '"' | '`' = 'code';
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i]!;
    const next = text[i + 1];
    if (state === 'code') {
      if (c === '/' && next === '/') state = 'line';
      else if (c === '/' && next === '*') state = 'block';
      else if (c === "'" || c === '"' || c === '`') state = c;
      out += state === 'code' ? c : state === 'line' || state === 'block' ? ' ' : c;
      continue;
    }
    if (c === '\n') {
      out += '\n';
      if (state === 'line' || state === "'" || state === '"') state = 'code';
      continue;
    }
    if (state === 'line') out += ' ';
    else if (state === 'block') {
      out += ' ';
      if (c === '*' && next === '/') {
        out += ' ';
        i += 1;
        state = 'code';
      }
    } else if (c === '\\') {
      out += '  '.slice(0, next === undefined || next === '\n' ? 1 : 2);
      if (next !== undefined && next !== '\n') i += 1;
    } else if (c === state) {
      out += c;
      state = 'code';
    } else out += ' ';
  }
  return out;
}
