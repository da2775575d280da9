import { createHash } from 'node:crypto';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect } from 'vitest';
import { runEmbedded } from '../../../src/compose/embedded-run.js';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { useTempDepsCache } from '../../helpers/deps-fixture.js';
import { startOutsideServer, type OutsideServer } from '../../helpers/outside-server.js';
import { itWith } from '../../helpers/services.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { baseManifest, makeWorld } from '../../helpers/world-fixture.js';

useTempDepsCache();

/**
 * A package index (PEP 503 "simple" API) serving one wheel built here, on a stand-in for a host
 * outside (a network namespace of its own: the install's sandbox reaches no service on this
 * host): pip's real resolver and downloader at work, without depending on pypi.org, which this
 * machine cannot reach. It counts the downloads.
 */
async function serveIndex(wheel: string): Promise<{ url: string; host: string; downloads: () => number; server: OutsideServer }> {
  const root = await tempDir('genesis-index-');
  const file = basename(wheel);
  const sha = createHash('sha256')
    .update(await readFile(wheel))
    .digest('hex');
  await mkdir(join(root, 'simple', 'tinyver'), { recursive: true });
  await mkdir(join(root, 'files'));
  await writeFile(join(root, 'simple', 'tinyver', 'index.html'), `<!DOCTYPE html><html><body><a href="/files/${file}#sha256=${sha}">${file}</a></body></html>`);
  await copyFile(wheel, join(root, 'files', file));
  const server = await startOutsideServer('', root);
  return { url: `${server.url}simple`, host: server.host, downloads: () => server.received().filter((r) => r.url === `/files/${file}`).length, server };
}

let server: OutsideServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('a Python world with verify.deps and pip', () => {
  // bwrap: its install reaches the outside through a network namespace of its own, as a confined agent does.
  itWith('bwrap')('installs the requirements once with pip, and gates import them offline', { timeout: 180_000 }, async () => {
    const wheels = await tempDir('genesis-wheels-');
    const wheel = (await execa('/usr/bin/python3', [join(import.meta.dirname, '../../fixtures/deps/make-wheel.py'), wheels, 'tinyver', '1.2.0'])).stdout.trim();
    const index = await serveIndex(wheel);
    server = index.server;
    const deps = {
      files: ['requirements.txt'],
      // PIP_CONFIG_FILE=/dev/null: this machine's pip.conf names local mirrors the sandbox cannot see.
      install: `PIP_CONFIG_FILE=/dev/null python3 -m pip install --no-cache-dir --index-url ${index.url} --trusted-host ${index.host} --target .pydeps -r requirements.txt`,
      paths: ['.pydeps'],
    };
    const manifest = baseManifest({
      verify: {
        sandbox: 'bwrap',
        deps,
        test: 'PYTHONPATH=.pydeps python3 -m unittest tests.test_base -v',
        timeoutSec: 120,
        limits: { cpus: 1, memoryMb: 512, pids: 128 },
      },
      tasks: [{ id: 'cmp', title: 'compare versions', paths: ['app/cmp.py'], check: 'PYTHONPATH=.pydeps:. python3 -m unittest tests.test_cmp -v' }],
      protected: ['tests/**', 'world.yaml', '.genesis/**'],
    });
    const files = {
      'requirements.txt': 'tinyver==1.2.0\n',
      'tests/__init__.py': '',
      'tests/test_base.py':
        'import unittest\nimport tinyver\n\nclass Base(unittest.TestCase):\n    def test_dependency(self):\n        self.assertEqual(tinyver.parse("1.2.0"), (1, 2, 0))\n',
      'tests/test_cmp.py':
        'import unittest\nfrom app.cmp import newer\n\nclass Cmp(unittest.TestCase):\n    def test_newer(self):\n        self.assertTrue(newer("1.10.0", "1.9.9"))\n',
      'app/__init__.py': '',
    };
    const cmp = 'import tinyver\n\ndef newer(a, b):\n    return tinyver.parse(a) > tinyver.parse(b)\n';
    const f = await makeWorld({ sandbox: 'bwrap', manifest, files, recording: { cmp: [{ write: { 'app/cmp.py': cmp } }] } });
    const summary = await runEmbedded({ world: f.world, sandbox: f.sandbox });
    expect(summary.stop.kind).toBe('done');
    const [episode] = await new GitLedger(f.world.path).readAll();
    const gateLog = (await new GitLedger(f.world.path).readArtifacts(episode!.id)).gateLog;
    expect(episode).toMatchObject({ outcome: 'accepted' });
    expect(gateLog).toContain('already prepared on this machine');
    expect(gateLog).toMatch(/test_newer .* ok/);
    // Installed once, at init: the episode's workspace and gate found the prepared set.
    expect(index.downloads()).toBe(1);
  });
});
