/** What a mutant changes: an operator, a constant, a condition negated, a value returned, or a statement removed. */
export type MutationKind = 'operator' | 'constant' | 'condition' | 'return' | 'statement';

/** One small wrong change to one line of a source file. */
export interface MutationSite {
  path: string;
  /** 1-based. */
  line: number;
  kind: MutationKind;
  before: string;
  after: string;
}

/** The file with one site's line replaced. */
export function applyMutation(text: string, mutation: MutationSite): string {
  const lines = text.split('\n');
  lines[mutation.line - 1] = mutation.after;
  return lines.join('\n');
}

/** The site that replaces `from`, found at `at` in the line, by `to`. */
export function replacedAt(path: string, line: number, kind: MutationKind, original: string, at: number, from: string, to: string): MutationSite {
  return { path, line, kind, before: original, after: `${original.slice(0, at)}${to}${original.slice(at + from.length)}` };
}

/** Every occurrence of each `[from, to]` in the masked line, as an operator site on the original. */
export function operatorSites(path: string, line: number, original: string, code: string, operators: ReadonlyArray<readonly [string, string]>): MutationSite[] {
  const sites: MutationSite[] = [];
  for (const [from, to] of operators) {
    for (let at = code.indexOf(from); at >= 0; at = code.indexOf(from, at + 1)) sites.push(replacedAt(path, line, 'operator', original, at, from, to));
  }
  return sites;
}

/** Each whole-number literal raised by one (one becomes zero), as constant sites on the original. */
export function integerSites(path: string, line: number, original: string, code: string): MutationSite[] {
  return [...code.matchAll(/(?<![\w.$])(\d+)(?![\w.$])/g)].map((match) => {
    const value = Number(match[1]);
    return replacedAt(path, line, 'constant', original, match.index, match[1]!, String(value === 1 ? 0 : value + 1));
  });
}

/** The index of the bracket closing the one at `open`, or -1. */
export function matchingParen(code: string, open: number): number {
  let depth = 0;
  for (let i = open; i < code.length; i += 1) {
    if (code[i] === '(') depth += 1;
    else if (code[i] === ')') {
      depth -= 1;
      if (depth === 0) return i;
    }
  }
  return -1;
}

/** Whether every bracket the line opens it also closes, none closed before opened. */
export function balanced(code: string): boolean {
  let depth = 0;
  for (const c of code) {
    if (c === '(' || c === '[' || c === '{') depth += 1;
    else if (c === ')' || c === ']' || c === '}') depth -= 1;
    if (depth < 0) return false;
  }
  return depth === 0;
}
