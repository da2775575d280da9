/**
 * Loaded by every Node process of the coverage run (NODE_OPTIONS `--require`), so what V8 alone
 * cannot give the collector is there after the tests, whatever runner started the process:
 *
 * - A runner's worker stopped by SIGTERM (vitest's forks pool, through tinypool) dies before Node
 *   writes its NODE_V8_COVERAGE file, and the tests ran in that worker. On SIGTERM the coverage is
 *   written first (`v8.takeCoverage`); when nothing else listens, the signal is then raised again
 *   with Node's own handling, so the process ends as it would have.
 * - Code a runner transformed and evaluates by `vm` under the file's name is reported by V8 under
 *   that name, in positions of the transform, not of the file; Node 20 keeps no source map for it.
 *   The runners' ways in: `vm.runInThisContext` (vite-node, vitest's module runner),
 *   `vm.runInContext` (the same transform in a context of its own: vitest's vmThreads and vmForks
 *   pools), a `vm.Script` (jest, its module wrapped in a function) and a `vm.SourceTextModule`
 *   (jest's ESM mode, present only under `--experimental-vm-modules`). The code of each file of
 *   the work dir is saved with its offsets into GENESIS_NODE_SCRIPTS, so the collector can place
 *   its positions on the file's lines: through its inline source map, or, with none, where the
 *   file's own text sits in it (a module wrapper around it shifts every offset V8 reports).
 *
 * Each saved script is named by a hash of its code, so the same transform evaluated in many
 * workers is written once.
 */
export const NODE_PRELOAD = String.raw`
(() => {
  const fs = require('fs'), path = require('path'), vm = require('vm'), crypto = require('crypto');
  const out = process.env.GENESIS_NODE_SCRIPTS, root = process.cwd();
  process.on('SIGTERM', function genesisWriteCoverage() {
    try { require('v8').takeCoverage(); } catch {}
    if (process.listenerCount('SIGTERM') === 1) {
      process.removeListener('SIGTERM', genesisWriteCoverage);
      process.kill(process.pid, 'SIGTERM');
    }
  });
  if (!out) return;
  const keep = (code, options) => {
    try {
      const file = options && typeof options === 'object' ? options.filename : undefined;
      if (typeof code !== 'string' || typeof file !== 'string') return;
      const rel = path.relative(root, file.startsWith('file://') ? require('url').fileURLToPath(file) : file);
      if (!rel || rel.startsWith('..') || path.isAbsolute(rel) || rel.split(path.sep).includes('node_modules')) return;
      const saved = path.join(out, crypto.createHash('sha1').update(code).digest('hex') + '.json');
      if (fs.existsSync(saved)) return;
      // Written whole under another name first: workers save the same script at once.
      fs.writeFileSync(saved + '.' + process.pid, JSON.stringify({ filename: file, lineOffset: options.lineOffset || 0, columnOffset: options.columnOffset || 0, code }));
      fs.renameSync(saved + '.' + process.pid, saved);
    } catch {}
  };
  const run = vm.runInThisContext;
  vm.runInThisContext = function (code, options) {
    keep(code, options);
    return run.apply(this, arguments);
  };
  // vitest's vm pools run each test file's modules in a vm context of their own.
  const runIn = vm.runInContext;
  vm.runInContext = function (code, context, options) {
    keep(code, options);
    return runIn.apply(this, arguments);
  };
  // jest builds each module as a vm.Script of its transform (babel-jest and ts-jest inline their map).
  const Script = vm.Script;
  vm.Script = class extends Script {
    constructor(code, options) {
      keep(code, options);
      super(code, options);
    }
  };
  Object.defineProperty(vm.Script, 'name', { value: 'Script' });
  // A module's name is its identifier (jest gives the file's path), not a filename.
  const SourceTextModule = vm.SourceTextModule;
  if (SourceTextModule) {
    vm.SourceTextModule = class extends SourceTextModule {
      constructor(code, options) {
        keep(code, options && { ...options, filename: options.identifier });
        super(code, options);
      }
    };
    Object.defineProperty(vm.SourceTextModule, 'name', { value: 'SourceTextModule' });
  }
})();
`;
