import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { basename, join } from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect } from 'vitest';
import { runWorld } from '../../../src/schedule/run-world.js';
import { Ledger } from '../../../src/world/ledger.js';
import { useTempDepsCache } from '../../helpers/deps-fixture.js';
import { itWith } from '../../helpers/services.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { baseManifest, makeWorld } from '../../helpers/world-fixture.js';

useTempDepsCache();

/**
 * A package index (PEP 503 "simple" API) over HTTP on the host's loopback, serving one wheel built
 * here: pip's real resolver and downloader at work, without depending on pypi.org, which this
 * machine cannot reach. It counts the downloads.
 */
async function serveIndex(wheel: string): Promise<{ url: string; downloads: () => number; server: Server }> {
  const bytes = await readFile(wheel);
  const file = basename(wheel);
  const sha = createHash('sha256').update(bytes).digest('hex');
  let downloads = 0;
  const server = createServer((req, res) => {
    if (req.url === '/simple/tinyver/') {
      res.setHeader('content-type', 'text/html');
      res.end(`<!DOCTYPE html><html><body><a href="/files/${file}#sha256=${sha}">${file}</a></body></html>`);
    } else if (req.url === `/files/${file}`) {
      downloads++;
      res.end(bytes);
    } else {
      res.statusCode = 404;
      res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/simple`, downloads: () => downloads, server };
}

let server: Server | undefined;
afterEach(() => server?.close());

describe('a Python world with verify.deps and pip', () => {
  // bwrap: its install shares the host's network, where the test's index listens (Docker's bridge would not reach it).
  itWith('bwrap')('installs the requirements once with pip, and gates import them offline', { timeout: 180_000 }, async () => {
    const wheels = await tempDir('genesis-wheels-');
    const wheel = (await execa('/usr/bin/python3', [join(import.meta.dirname, '../../fixtures/deps/make-wheel.py'), wheels, 'tinyver', '1.2.0'])).stdout.trim();
    const index = await serveIndex(wheel);
    server = index.server;
    const deps = {
      files: ['requirements.txt'],
      // PIP_CONFIG_FILE=/dev/null: this machine's pip.conf names local mirrors the sandbox cannot see.
      install: `PIP_CONFIG_FILE=/dev/null python3 -m pip install --no-cache-dir --index-url ${index.url} --target .pydeps -r requirements.txt`,
      paths: ['.pydeps'],
    };
    const manifest = baseManifest({
      verify: { sandbox: 'bwrap', deps, test: 'PYTHONPATH=.pydeps python3 -m unittest tests.test_base -v', timeoutSec: 120, limits: { cpus: 1, memoryMb: 512, pids: 128 } },
      tasks: [{ id: 'cmp', title: 'compare versions', paths: ['app/cmp.py'], check: 'PYTHONPATH=.pydeps:. python3 -m unittest tests.test_cmp -v' }],
      protected: ['tests/**', 'world.yaml', '.genesis/**'],
    });
    const files = {
      'requirements.txt': 'tinyver==1.2.0\n',
      'tests/__init__.py': '',
      'tests/test_base.py': 'import unittest\nimport tinyver\n\nclass Base(unittest.TestCase):\n    def test_dependency(self):\n        self.assertEqual(tinyver.parse("1.2.0"), (1, 2, 0))\n',
      'tests/test_cmp.py': 'import unittest\nfrom app.cmp import newer\n\nclass Cmp(unittest.TestCase):\n    def test_newer(self):\n        self.assertTrue(newer("1.10.0", "1.9.9"))\n',
      'app/__init__.py': '',
    };
    const cmp = 'import tinyver\n\ndef newer(a, b):\n    return tinyver.parse(a) > tinyver.parse(b)\n';
    const f = await makeWorld({ sandbox: 'bwrap', manifest, files, recording: { cmp: [{ write: { 'app/cmp.py': cmp } }] } });
    const summary = await runWorld({ world: f.world, sandbox: f.sandbox });
    expect(summary.stop.kind).toBe('done');
    const [episode] = await new Ledger(f.world.path).readAll();
    const gateLog = (await new Ledger(f.world.path).readArtifacts(episode!.id)).gateLog;
    expect(episode).toMatchObject({ outcome: 'accepted' });
    expect(gateLog).toContain('already prepared on this machine');
    expect(gateLog).toMatch(/test_newer .* ok/);
    // Installed once, at init: the episode's workspace and gate found the prepared set.
    expect(index.downloads()).toBe(1);
  });
});
