import test from 'node:test';
import assert from 'node:assert/strict';
import { mul, div } from '../src/muldiv.js';

test('mul multiplies', () => {
  assert.equal(mul(3, 4), 12);
  assert.equal(mul(-3, 4), -12);
  assert.equal(mul(7, 0), 0);
});
test('div truncates toward zero', () => {
  assert.equal(div(7, 2), 3);
  assert.equal(div(-7, 2), -3);
});
test('div by zero throws RangeError', () => {
  assert.throws(() => div(1, 0), RangeError);
});
