/**
 * The setup file the node preload adds to every vitest fork worker's `setupFiles`, as text: written
 * per gate, with that gate's nonce in it. A setup file runs in each test file's context before the
 * file is collected, and vitest runs tests only once the file is collected, so these canaries run
 * after the file's imports did whatever they did to `expect`. The must-fail one is `test.fails`
 * (it passes when its body throws, and fails no run); both check that `expect` still throws for a
 * false claim, and only for one.
 */
export function vitestSetup(nonce: string): string {
  return `// Genesis gate canary. Read-only; changes nothing in a world but what a world must not change.
import { randomBytes } from 'node:crypto';
import { expect, test } from 'vitest';
const proc = 'vitest-' + randomBytes(6).toString('hex');
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
test.fails(name('must-fail'), () => {
  if (expectHolds()) throw new Error('fails as it must');
});
`;
}
