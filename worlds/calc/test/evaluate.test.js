import test from 'node:test';
import assert from 'node:assert/strict';
import { evaluate } from '../src/evaluate.js';

test('precedence', () => {
  assert.equal(evaluate('2+3*4'), 14);
  assert.equal(evaluate('10-4/2'), 8);
});
test('parentheses', () => {
  assert.equal(evaluate('(2+3)*4'), 20);
  assert.equal(evaluate('2*(3+(4-1))'), 12);
});
test('left associativity', () => {
  assert.equal(evaluate('10-3-2'), 5);
  assert.equal(evaluate('100/10/5'), 2);
});
test('malformed input throws SyntaxError', () => {
  assert.throws(() => evaluate('2+'), SyntaxError);
  assert.throws(() => evaluate('(1'), SyntaxError);
});
