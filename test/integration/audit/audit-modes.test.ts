import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { auditWorld } from '../../../src/audit/index.js';
import { runEmbedded } from '../../../src/compose/embedded-run.js';
import { itWith } from '../../helpers/services.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { baseManifest, GOOD_A, GOOD_B, makeWorld } from '../../helpers/world-fixture.js';

describe('genesis audit on worlds that use the harness', () => {
  itWith('bwrap')('passes a ratchet world, whose accepted trees do not pass every test, as long as no score fell', async () => {
    const suite = Array.from({ length: 4 }, (_, i) => `test('t${i}', () => assert.ok(existsSync('src/f${i}.js')));`).join('\n');
    const manifest = baseManifest({
      verify: { sandbox: 'bwrap', test: 'node --test test/suite.test.js', mode: 'ratchet' },
      tasks: [{ id: 'more', title: 'pass more', paths: ['src/f0.js', 'src/f1.js'] }],
    });
    const files = {
      'test/suite.test.js': `import test from 'node:test';\nimport assert from 'node:assert';\nimport { existsSync } from 'node:fs';\n${suite}\n`,
    };
    const f = await makeWorld({ sandbox: 'bwrap', manifest, files, recording: { more: [{ write: { 'src/f0.js': '', 'src/f1.js': '' } }] } });
    await runEmbedded({ world: f.world, sandbox: f.sandbox });
    const report = await auditWorld({ world: f.world, sandbox: f.sandbox });
    expect(report.findings).toEqual([]);
    expect(report.reverified.commits).toBe(2);
  });

  itWith('bwrap')("passes a world whose episodes append to the shared progress file outside their tasks' paths", async () => {
    const manifest = baseManifest({ goal: { outcome: 'x', progressFile: 'PROGRESS.md' } });
    const f = await makeWorld({
      sandbox: 'bwrap',
      manifest,
      files: { 'PROGRESS.md': '# Progress\n' },
      recording: {
        a: [{ write: { 'src/a.js': GOOD_A, 'PROGRESS.md': '# Progress\n- a: done\n' } }],
        b: [{ write: { 'src/b.js': GOOD_B, 'PROGRESS.md': '# Progress\n- b: done\n' } }],
      },
    });
    await runEmbedded({ world: f.world, sandbox: f.sandbox });
    const report = await auditWorld({ world: f.world, sandbox: f.sandbox, sample: 0 });
    expect(report.commits).toBe(3);
    expect(report.findings).toEqual([]);
  });

  itWith('bwrap')('agrees with genesis init on the first commit: hidden tests its starting content fails judge only the changes after it', async () => {
    const holdout = await tempDir('genesis-holdout-');
    await writeFile(
      join(holdout, 'hidden.test.js'),
      "import test from 'node:test';\nimport assert from 'node:assert';\nimport { existsSync } from 'node:fs';\ntest('a exists', () => assert.ok(existsSync('src/a.js')));\n",
    );
    const manifest = baseManifest({
      verify: { sandbox: 'bwrap', test: 'node --test test/base.test.js', timeoutSec: 60, holdout: { dir: holdout, command: 'node --test .genesis-holdout/' } },
      tasks: [{ id: 'a', title: 'module a', paths: ['src/a.js'], check: 'node --test test/a.test.js' }],
    });
    const f = await makeWorld({ sandbox: 'bwrap', manifest, recording: { a: [{ write: { 'src/a.js': GOOD_A } }] } });
    await runEmbedded({ world: f.world, sandbox: f.sandbox });
    const report = await auditWorld({ world: f.world, sandbox: f.sandbox });
    expect(report.reverified.commits).toBe(2);
    expect(report.findings).toEqual([]);
  });
});
