import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { stringify } from 'yaml';
import { genesis } from '../../../helpers/genesis-cli.js';
import { itWith } from '../../../helpers/services.js';
import { tempDir } from '../../../helpers/temp-dir.js';

// grade runs under the tests; unused never does. Sites on grade's lines: `>=` flipped, 50 changed,
// the condition negated (line 2), and each returned value replaced (lines 3 and 4): five in all.
// unused's lines would add six more (`*`, 2, the assignment removed; `+`, 1, the value returned).
const CALC = 'def grade(score):\n    if score >= 50:\n        return "pass"\n    return "fail"\n\n\ndef unused(n):\n    total = n * 2\n    return total + 1\n';
const TESTS = 'from calc import grade\n\n\ndef test_grade():\n    assert grade(70) == "pass"\n    assert grade(50) == "pass"\n    assert grade(10) == "fail"\n';

describe('genesis calibrate on a Python project', () => {
  itWith('docker')(
    'gates mutants of the lines pytest executes, read in the Python gate image, and none of a line it never runs',
    async () => {
      const dir = await tempDir('genesis-calibrate-py-');
      const source = join(dir, 'src');
      await mkdir(join(source, 'tests'), { recursive: true });
      await writeFile(join(source, 'calc.py'), CALC);
      await writeFile(join(source, 'tests', 'test_calc.py'), TESTS);
      await writeFile(
        join(source, 'world.yaml'),
        stringify({
          name: 'calc',
          goal: { outcome: 'x' },
          verify: { sandbox: 'docker', image: 'genesis/python:3', test: 'python3 -B -m pytest -p no:cacheprovider -q tests' },
          protected: ['tests/**', 'world.yaml'],
          agent: { kind: 'command', command: ['true'] },
        }),
      );
      const world = join(dir, 'calc.world');
      const init = await genesis(['init', '--world', world, '--from', source]);
      expect(init.status, init.stderr).toBe(0);
      const run = await genesis(['calibrate', '--world', world, '--commits', '0', '--mutants', '20', '--jobs', '2', '--json']);
      expect(run.status, run.stderr).toBe(0);
      const recall = JSON.parse(run.stdout).recall;
      expect(recall).toMatchObject({
        sites: 5,
        of: 5,
        count: 5,
        executedLinesOnly: true,
        files: ['calc.py'],
        byLanguage: [{ language: 'python', count: 5, of: 5 }],
      });
      const gated = [...run.stderr.matchAll(/calc\.py:(\d+) (\w+): caught/g)].map((m) => `${m[1]} ${m[2]}`).sort();
      expect(gated).toEqual(['2 condition', '2 constant', '2 operator', '3 return', '4 return']);
      const text = await genesis(['calibrate', '--world', world, '--commits', '0', '--mutants', '2', '--quiet']);
      expect(text.stdout).toContain('on lines the tests execute in 1 files');
      expect(text.stdout).toContain('by language: python 2 of 2');
    },
    300_000,
  );

  itWith('bwrap')(
    'catches a mutant that loops forever in a gate timed by the suite’s own time, not the gate’s ten minutes',
    async () => {
      const dir = await tempDir('genesis-calibrate-py-');
      const source = join(dir, 'src');
      await mkdir(join(source, 'tests'), { recursive: true });
      // Two sites: the condition negated (caught at once), and the pop replaced by `pass`, which never ends.
      await writeFile(join(source, 'drain.py'), 'def drain(items):\n    while items:\n        items.pop()\n');
      await writeFile(
        join(source, 'tests', 'test_drain.py'),
        'from drain import drain\n\n\ndef test_drain():\n    items = [1, 2]\n    drain(items)\n    assert items == []\n',
      );
      await writeFile(
        join(source, 'world.yaml'),
        stringify({
          name: 'drain',
          goal: { outcome: 'x' },
          verify: { sandbox: 'bwrap', test: 'python3 -B -m pytest -p no:cacheprovider -q tests', timeoutSec: 600 },
          protected: ['tests/**', 'world.yaml'],
          agent: { kind: 'command', command: ['true'] },
        }),
      );
      const world = join(dir, 'drain.world');
      const init = await genesis(['init', '--world', world, '--from', source]);
      expect(init.status, init.stderr).toBe(0);
      const run = await genesis(['calibrate', '--world', world, '--commits', '0', '--mutants', '2', '--jobs', '2', '--json']);
      expect(run.status, run.stderr).toBe(0);
      const report = JSON.parse(run.stdout);
      expect(report.recall).toMatchObject({ sites: 2, of: 2, count: 2, timeoutSec: 20 });
      expect(run.stderr).toContain('drain.py:3 statement: caught (gate-timeout)');
      // The looping mutant's gate takes its 20 s and, run again, twice that: a minute, not the
      // ten of verify.timeoutSec, and not a third run on a second gate.
      expect(report.durationMs).toBeLessThan(150_000);
    },
    420_000,
  );
});
