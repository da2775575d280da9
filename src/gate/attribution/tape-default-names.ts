/**
 * The names tape gives an assertion that has no message of its own, and the calls that make them.
 * Pure.
 *
 * tape names each test point by its assertion's message. `t.deepEqual(a, b)` is reported as
 * "should be deeply equivalent" (tape 5) or "should be equivalent" (tape 4), and an assertion
 * handed an object where the message goes (`t.deepEqual(a, b, { prototype: false })`, an options
 * bag tape does not take there) as "[object Object]". No literal of the test file writes such a
 * name, so it is found by the call of a method that makes it. Many tests share such a name: a file
 * defines it when it calls one of those methods, and a protected file that calls one keeps every
 * test of that name guarded (own-tests.ts).
 */

const EQUAL = ['equal', 'equals', 'isEqual', 'strictEqual', 'strictEquals', 'is'];
const NOT_EQUAL = ['notEqual', 'notEquals', 'isNotEqual', 'doesNotEqual', 'isInequal', 'notStrictEqual', 'notStrictEquals', 'isNot', 'not'];
const DEEP = ['deepEqual', 'deepEquals', 'isEquivalent', 'same'];
const NOT_DEEP = [
  'notDeepEqual',
  'notDeepEquals',
  'notEquivalent',
  'notDeeply',
  'notSame',
  'isNotDeepEqual',
  'isNotDeeply',
  'isNotEquivalent',
  'isInequivalent',
];
const LOOSE = ['looseEqual', 'looseEquals'];
const NOT_LOOSE = ['notLooseEqual', 'notLooseEquals'];

/** Each default message of tape 5 and of tape 4 (their lib/test.js), with the assertion methods that give it. */
const DEFAULT_NAMES: ReadonlyMap<string, readonly string[]> = new Map([
  ['should be truthy', ['ok', 'true', 'assert']],
  ['should be falsy', ['notOk', 'false', 'notok']],
  ['should be strictly equal', EQUAL],
  ['should be equal', EQUAL],
  ['should not be strictly equal', NOT_EQUAL],
  ['should not be equal', NOT_EQUAL],
  ['should be loosely equal', LOOSE],
  ['should not be loosely equal', NOT_LOOSE],
  ['should be deeply equivalent', DEEP],
  // tape 4 gives its loose comparisons, negated or not, this same name.
  ['should be equivalent', [...DEEP, 'deepLooseEqual', 'notDeepLooseEqual', ...LOOSE, ...NOT_LOOSE]],
  ['should not be deeply equivalent', NOT_DEEP],
  ['should not be equivalent', NOT_DEEP],
  ['should be loosely deeply equivalent', ['deepLooseEqual']],
  ['should not be loosely deeply equivalent', ['notDeepLooseEqual']],
  ['should throw', ['throws']],
  ['should not throw', ['doesNotThrow']],
]);

const EVERY_METHOD = [...new Set([...DEFAULT_NAMES.values()].flat())];
/** What String() makes of an object given as an assertion's message. */
const OBJECT_NAME = '[object Object]';

/** A call of one of `methods` on any object: `t.ok(`, `st.deepEqual (`, `t['true'](`. */
const callOf = (methods: readonly string[]): string => `(?:\\.\\s*(?:${methods.join('|')})|\\[\\s*['"](?:${methods.join('|')})['"]\\s*\\])\\s*\\(`;

const CALLS: ReadonlyMap<string, RegExp> = new Map([
  ...[...DEFAULT_NAMES].map(([name, methods]) => [name, new RegExp(callOf(methods))] as const),
  // An object literal among the call's arguments, in the same statement: a superset of the calls
  // that pass one as the message (`{` of an argument's own object too), never fewer.
  [OBJECT_NAME, new RegExp(`${callOf(EVERY_METHOD)}[^;]*?,\\s*\\{`)],
]);

/** True when `name` is a name tape makes up for an assertion and `text` calls a method that makes it. */
export function callsTapeAssertionNamed(text: string, name: string): boolean {
  return CALLS.get(name)?.test(text) ?? false;
}
