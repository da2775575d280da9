import test from 'node:test';
import assert from 'node:assert/strict';
import { tokenize } from '../src/tokenize.js';

test('numbers and operators become tokens', () => {
  assert.deepEqual(tokenize('12+3'), [
    { type: 'num', value: 12 },
    { type: 'op', value: '+' },
    { type: 'num', value: 3 },
  ]);
});
test('whitespace and parentheses', () => {
  assert.deepEqual(tokenize(' (1 * 2) ').map((t) => t.value), ['(', 1, '*', 2, ')']);
});
test('anything else is a SyntaxError', () => {
  assert.throws(() => tokenize('2 ^ 3'), SyntaxError);
});
