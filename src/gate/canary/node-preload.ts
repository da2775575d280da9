/**
 * The file every node process of a test step loads first (`NODE_OPTIONS=--require`), as text:
 * written per gate into the read-only canary directory, with that gate's nonce in it.
 *
 * In every node process it freezes the assertion modules (`node:assert`, `assert/strict`, the
 * AssertionError class) and node:test's exports before any code of the world loads: an assignment
 * to them throws, and `syncBuiltinESMExports` has nothing new to copy into the ESM bindings.
 *
 * In each process `node --test` starts for a test file it registers two canaries ahead of the
 * file's tests: one that must pass, and a todo test that must fail (a todo's failure fails no run,
 * so the world's exit code is untouched), each checking that assertions still throw for a false
 * claim and only for one. A root `after` hook checks again once the file's tests ran, and fails
 * naming the nonce when they do not. In a vitest fork worker it adds the canaries' vitest setup
 * file to the config the worker is sent. In a process that runs jest test files it adds the
 * canaries' jest setup file to the `setupFilesAfterEnv` jest-circus is called with, when the run
 * is verbose (a run of one file is). In a test file node-tap runs (a child node process with
 * `TAP=1` and `TAP_CHILD_ID`) it adds to the file's root test, once the event loop empties after the
 * file ran, an assertion that must pass (after a probe Test's assertions still fail a false claim
 * and only one) and two todo assertions that must fail, `ok` and `equal`. A file that throws before its first test started fails as a
 * file, as it would without canaries ahead of it. Processes those processes start (a test that runs node) get
 * no canaries: their output is the test's to read.
 *
 * When the canary directory holds {@link TIMEOUT_FACTOR_FILE} (the run again of a step whose only
 * failures were per-test timeouts), it raises vitest's and jest's per-test and hook time limits
 * that many times, in the config they are sent, and mocha's, as each test and hook is given its own.
 */
/** The file of the canary directory that raises the runners' per-test time limits (GateCanaries.withTestTimeoutsRaised). */
export const TIMEOUT_FACTOR_FILE = 'timeout-factor';

export function nodePreload(nonce: string): string {
  return `'use strict';
// Genesis gate canary. Read-only; changes nothing in a world but what a world must not change.
const assert = require('node:assert');
for (const o of [assert, assert.strict, assert.AssertionError, assert.AssertionError.prototype]) Object.freeze(o);
const nodeTest = require('node:test');
Object.freeze(nodeTest);
const NONCE = ${JSON.stringify(nonce)};
// In the run again of a step that failed only by per-test timeouts, the gate raises the runners' own limits.
let timeoutFactor = 1;
try { timeoutFactor = Number(require('node:fs').readFileSync(require('node:path').join(__dirname, ${JSON.stringify(TIMEOUT_FACTOR_FILE)}), 'utf8')) || 1; } catch {}
const raiseTimeouts = (config) => {
  if (timeoutFactor <= 1 || !config) return config;
  const raised = { ...config };
  for (const key of ['testTimeout', 'hookTimeout']) if (typeof config[key] === 'number' && config[key] > 0) raised[key] = config[key] * timeoutFactor;
  return raised;
};
// A vitest fork worker is told its config in its first message: the canary setup file joins its setupFiles.
if (process.send && /vitest[\\\\/]dist[\\\\/]workers[\\\\/]/.test(String(process.argv[1] || ''))) {
  const setup = require('node:path').join(__dirname, 'vitest-setup.mjs');
  const withSetup = (listener) => function (message, ...rest) {
    const config = message && message.context && message.context.config;
    if (config && Array.isArray(config.setupFiles) && !config.setupFiles.includes(setup)) config.setupFiles.push(setup);
    if (config) Object.assign(config, raiseTimeouts(config));
    return listener.call(this, message, ...rest);
  };
  const on = process.on;
  process.on = process.addListener = function (event, listener) {
    return on.call(this, event, event === 'message' && typeof listener === 'function' ? withSetup(listener) : listener);
  };
}
// jest loads its test runner (jest-circus) in each process that runs test files: the canary setup
// file joins the setupFilesAfterEnv it is called with (in jest's own scripts and its workers), when the run's reporter names every test
// (verbose, as jest is for a run of one file); otherwise the canaries would count with no name.
if (/[\\\\/]node_modules[\\\\/](?:\\.bin[\\\\/]jest|jest(?:-cli)?[\\\\/]bin[\\\\/]jest(?:\\.js)?|jest-worker[\\\\/]build[\\\\/]workers[\\\\/][^\\\\/]+)$/.test(String(process.argv[1] || ''))) {
  const Module = require('node:module');
  const setup = require('node:path').join(__dirname, 'jest-setup.cjs');
  const load = Module._load;
  const wrapped = new WeakMap();
  Module._load = function (request, ...rest) {
    const exported = load.call(this, request, ...rest);
    if (typeof exported !== 'function' || !/jest-circus[\\\\/]runner(\\.js)?$/.test(String(request))) return exported;
    if (!wrapped.has(exported))
      wrapped.set(exported, function (globalConfig, config, ...args) {
        const named = globalConfig && globalConfig.verbose === true && config && Array.isArray(config.setupFilesAfterEnv);
        const withSetup = named ? { ...config, setupFilesAfterEnv: [...config.setupFilesAfterEnv, setup] } : config;
        return exported.call(this, raiseTimeouts(globalConfig), withSetup, ...args);
      });
    return wrapped.get(exported);
  };
}
// mocha runs its tests in its own process (bin/mocha, or lib/cli/cli.js when it starts a child for node's flags): in the
// run again its per-test and hook limits (--timeout, a suite's or a test's own this.timeout()) are raised, each set through Runnable#timeout.
if (timeoutFactor > 1 && /[\\\\/](?:\\.bin[\\\\/]_?mocha|mocha[\\\\/]bin[\\\\/]_?mocha(?:\\.js)?|mocha[\\\\/]lib[\\\\/]cli[\\\\/]cli\\.js)$/.test(String(process.argv[1] || ''))) {
  const Module = require('node:module');
  const load = Module._load;
  let raised = false;
  Module._load = function (request, ...rest) {
    const exported = load.call(this, request, ...rest);
    if (raised || !/(?:^|[\\\\/])runnable(?:\\.js)?$/.test(String(request)) || typeof exported !== 'function' || typeof exported.prototype.timeout !== 'function') return exported;
    raised = true;
    const timeout = exported.prototype.timeout;
    exported.prototype.timeout = function (ms) {
      if (arguments.length === 0) return timeout.call(this);
      const n = typeof ms === 'string' && /^\\d+$/.test(ms) ? Number(ms) : ms;
      return timeout.call(this, typeof n === 'number' && n > 0 && n * timeoutFactor < 2147483647 ? n * timeoutFactor : ms);
    };
    return exported;
  };
}
const MARK = 'GENESIS_CANARY_' + NONCE;
function assertionsHold() {
  const a = require('node:assert');
  const s = require('node:assert/strict');
  const falseClaims = [
    () => a.ok(false), () => a(false), () => a.equal(1, 2), () => a.strictEqual(1, 2), () => a.deepEqual({ a: 1 }, { a: 2 }),
    () => a.deepStrictEqual([1], [2]), () => a.notEqual(1, 1), () => a.notStrictEqual(1, 1), () => a.match('a', /b/),
    () => a.throws(() => {}), () => a.fail('x'), () => s.equal(1, 2), () => s.deepEqual([1], [2]), () => s.ok(false),
  ];
  for (const claim of falseClaims) {
    let threw = false;
    try { claim(); } catch { threw = true; }
    if (!threw) return false;
  }
  try { a.ok(true); a.strictEqual(1, 1); a.deepStrictEqual([1], [1]); s.equal(1, 1); } catch { return false; }
  return true;
}
// A test file node-tap runs is a child node process that writes TAP for its parent to fold in. Its
// canaries join its root test when the event loop empties, after the file and its imports ran and
// before tap ends the root; a root with a plan of its own or already ended gets none.
if (process.env.TAP === '1' && process.env.TAP_CHILD_ID && !process.env[MARK] && process.argv[1]) {
  process.env[MARK] = '1';
  let tapDone = false;
  process.on('beforeExit', () => {
    if (tapDone) return;
    tapDone = true;
    let tap;
    try { tap = require('node:module').createRequire(require('node:path').resolve(process.argv[1]))('tap'); } catch { return; }
    if (!tap || typeof tap.ok !== 'function' || tap.results || tap.ended || tap.planEnd !== -1) return;
    const proc = 'tap-' + require('node:crypto').randomBytes(6).toString('hex');
    const name = (what) => 'genesis-canary ' + NONCE + ' ' + proc + ' ' + what;
    const probe = new tap.Test({ name: 'genesis-canary probe' });
    let holds = false;
    try {
      holds = probe.ok(true) === true && probe.equal(1, 1) === true && probe.ok(false) === false && probe.equal(1, 2) === false &&
        probe.same({ a: 1 }, { a: 2 }) === false && probe.match('a', /b/) === false && assertionsHold();
    } catch { holds = false; }
    tap.ok(holds, name('must-pass'));
    tap.ok(false, name('ok must-fail'), { todo: 'fails as it must' });
    tap.equal(1, 2, name('equal must-fail'), { todo: 'fails as it must' });
  });
}
if (String(process.env.NODE_TEST_CONTEXT || '').startsWith('child') && !process.env[MARK]) {
  process.env[MARK] = '1';
  const proc = 'node-' + require('node:crypto').randomBytes(6).toString('hex');
  const name = (what) => 'genesis-canary ' + NONCE + ' ' + proc + ' ' + what;
  nodeTest.test(name('must-pass'), () => {
    if (!assertionsHold()) throw new Error('assertions do not hold');
  });
  nodeTest.test(name('must-fail'), { todo: 'fails as it must' }, () => {
    if (assertionsHold()) throw new Error('fails as it must');
  });
  // Without canaries ahead of it, a file that throws before its first test (a module that throws as
  // it loads) fails as a file; after they ended node would only report the error. It fails here
  // as node names such a failure: a test named after the file.
  let started = 0;
  nodeTest.beforeEach((t) => {
    if (!String(t.name).startsWith('genesis-canary ' + NONCE)) started++;
  });
  let early = false;
  process.on('uncaughtExceptionMonitor', (error) => {
    if (started > 0 || early) return;
    early = true;
    nodeTest.test(String(process.argv[1]), () => { throw error; });
  });
  nodeTest.after(() => {
    if (!assertionsHold()) throw new Error('genesis-canary ' + NONCE + ' tampered: assertions stopped holding while the tests ran');
  });
}
`;
}
