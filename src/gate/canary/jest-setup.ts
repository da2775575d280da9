/**
 * The setup file the node preload adds to jest's `setupFilesAfterEnv` in each process that runs a
 * test file with jest-circus, as text: written per gate, with that gate's nonce in it. It runs in
 * the test file's own vm context, where jest's `test` and `expect` are, and jest runs tests only
 * once the file is collected, so these canaries run after the file's imports did whatever they did
 * to `expect`. The must-fail one is `test.failing` (it passes when its body throws, and fails no
 * run); both check that `expect` still throws for a false claim, and only for one.
 */
export function jestSetup(nonce: string): string {
  return `// Genesis gate canary. Read-only; changes nothing in a world but what a world must not change.
'use strict';
const proc = 'jest-' + require('crypto').randomBytes(6).toString('hex');
const name = (what) => 'genesis-canary ' + ${JSON.stringify(nonce)} + ' ' + proc + ' ' + what;
function expectHolds() {
  const falseClaims = [() => expect(1).toBe(2), () => expect({ a: 1 }).toEqual({ a: 2 }), () => expect(false).toBeTruthy(), () => expect(() => {}).toThrow(), () => expect('a').toMatch(/b/)];
  for (const claim of falseClaims) {
    let threw = false;
    try { claim(); } catch { threw = true; }
    if (!threw) return false;
  }
  try { expect(1).toBe(1); expect([1]).toEqual([1]); } catch { return false; }
  return true;
}
test(name('must-pass'), () => {
  if (!expectHolds()) throw new Error('assertions do not hold');
});
test.failing(name('must-fail'), () => {
  if (expectHolds()) throw new Error('fails as it must');
});
`;
}
