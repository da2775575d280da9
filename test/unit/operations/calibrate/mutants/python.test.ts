import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { findPythonSites, maskPython } from '../../../../../src/operations/calibrate/mutants/python.js';
import { applyMutation } from '../../../../../src/operations/calibrate/mutants/site.js';

const SOURCE = [
  'LIMIT = "a == b"  # x < y', // 1: operators inside a string and a comment
  'def grade(score, passing=50):', // 2: a definition: nothing to change
  '    if score >= passing and score is not None:', // 3
  '        return "pass"', // 4
  '    total = score * 2', // 5
  '    doc = """', // 6: opens a string it does not close
  '    x + 1 == y', // 7: inside the string
  '    """', // 8
  '    call(a,', // 9: opens a call continued below
  '         b)', // 10
  '    return total > 10', // 11
  '    flag = True', // 12
].join('\n');

const on = (sites: ReturnType<typeof findPythonSites>, line: number) => sites.filter((s) => s.line === line).map((s) => `${s.kind}: ${s.after.trim()}`);

describe('Python mutation sites', () => {
  const sites = findPythonSites('calc.py', SOURCE, null);

  it('flips comparisons, swaps boolean and arithmetic operators, changes constants, negates a condition and changes a returned value', () => {
    expect(on(sites, 3)).toEqual(
      expect.arrayContaining([
        'operator: if score > passing and score is not None:',
        'operator: if score >= passing or score is not None:',
        'operator: if score >= passing and score is None:',
        'condition: if not (score >= passing and score is not None):',
      ]),
    );
    expect(on(sites, 4)).toEqual(['return: return None']);
    expect(on(sites, 5)).toEqual(['operator: total = score / 2', 'constant: total = score * 3', 'statement: pass']);
    expect(on(sites, 11)).toEqual(expect.arrayContaining(['operator: return total >= 10', 'constant: return total > 11', 'return: return None']));
    expect(on(sites, 12)).toEqual(['constant: flag = False', 'statement: pass']);
  });

  it('changes nothing inside strings, comments or definitions, and removes no line of a statement that goes on', () => {
    expect(on(sites, 1).filter((s) => s.startsWith('operator'))).toEqual([]);
    expect(on(sites, 2)).toEqual([]);
    expect(on(sites, 6)).toEqual([]);
    expect(on(sites, 7)).toEqual([]);
    expect(on(sites, 9)).toEqual([]);
    expect(on(sites, 10)).toEqual([]);
  });

  it('keeps to the lines the tests execute when they are known', () => {
    expect(new Set(findPythonSites('calc.py', SOURCE, new Set([4, 5])).map((s) => s.line))).toEqual(new Set([4, 5]));
  });

  it('masks every kind of string and comment, keeping offsets', () => {
    const text = "a = r'\\'' + b'x' # c\nd = '''e\nf''' + \"g\\\"h\"\n";
    const masked = maskPython(text);
    expect(masked).toHaveLength(text.length);
    expect(masked.split('\n')).toEqual(["a = r'  ' + b' '    ", "d = ''' ", " ''' + \"    \"", '']);
  });

  it('makes mutants that Python still compiles', () => {
    const mutants = sites.map((site) => applyMutation(`${SOURCE}\n`, site));
    expect(sites.length).toBeGreaterThan(10);
    const compile =
      'import json, sys\nfor i, m in enumerate(json.load(sys.stdin)):\n    try: compile(m, "calc.py", "exec")\n    except SyntaxError as e: print(i, e)';
    expect(execFileSync('python3', ['-c', compile], { input: JSON.stringify(mutants), encoding: 'utf8' })).toBe('');
  });
});
