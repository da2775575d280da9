import test from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const calc = fileURLToPath(new URL('../bin/calc.js', import.meta.url));

test('prints the value', () => {
  const r = spawnSync(process.execPath, [calc, '2+3*4'], { encoding: 'utf8' });
  assert.equal(r.status, 0);
  assert.equal(r.stdout.trim(), '14');
});
test('errors go to stderr with exit 1', () => {
  const r = spawnSync(process.execPath, [calc, '2+'], { encoding: 'utf8' });
  assert.equal(r.status, 1);
  assert.match(r.stderr, /./);
});
