import test from 'node:test';
import assert from 'node:assert/strict';
import { add, sub } from '../src/arith.js';

test('add adds', () => {
  assert.equal(add(2, 3), 5);
  assert.equal(add(-2, 2), 0);
});
test('sub subtracts', () => {
  assert.equal(sub(2, 3), -1);
  assert.equal(sub(10, 4), 6);
});
