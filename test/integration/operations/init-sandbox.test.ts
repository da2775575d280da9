import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { stringify } from 'yaml';
import { describe, expect } from 'vitest';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { itWith } from '../../helpers/services.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { BASE_FILES, baseManifest, GOOD_A, GOOD_B } from '../../helpers/world-fixture.js';
import { genesis } from '../../helpers/genesis-cli.js';

async function source(manifest: Record<string, unknown>): Promise<string> {
  const dir = join(await tempDir('genesis-init-sandbox-'), 'source');
  const files = {
    ...BASE_FILES,
    'world.yaml': stringify(manifest),
    '.genesis/recording.yaml': stringify({ tasks: { a: [{ write: { 'src/a.js': GOOD_A } }], b: [{ write: { 'src/b.js': GOOD_B } }] } }),
  };
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), content);
  }
  return dir;
}

describe('the sandbox chosen at init', () => {
  // Docker answers here, so `auto` alone would pick docker: bwrap in the gate records is init's choice at work.
  itWith('docker')('is the one run gates with, and run says so', async () => {
    const from = await source(baseManifest());
    const world = join(dirname(from), 'w.world');
    const init = await genesis(['init', '--world', world, '--from', from, '--sandbox', 'bwrap']);
    expect(init.status, init.stderr).toBe(0);
    const run = await genesis(['run', '--world', world]);
    expect(run.status, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toContain('sandbox: bwrap (chosen at genesis init --sandbox bwrap');
    const records = await new GitLedger(world).readAll();
    expect(records.map((r) => r.gate?.sandbox)).toEqual(['bwrap', 'bwrap']);
  });

  itWith('docker')('gives way to an explicit verify.sandbox and to a --sandbox flag', async () => {
    const from = await source(baseManifest({ verify: { ...(baseManifest().verify as object), sandbox: 'docker' } }));
    const world = join(dirname(from), 'w.world');
    expect((await genesis(['init', '--world', world, '--from', from, '--sandbox', 'bwrap'])).status).toBe(0);
    const byManifest = await genesis(['run', '--world', world, '--json']);
    expect(byManifest.stderr).toContain('sandbox: docker (verify.sandbox: docker in world.yaml)');
    const byFlag = await genesis(['run', '--world', world, '--sandbox', 'bwrap']);
    expect(byFlag.stdout).toContain('sandbox: bwrap (--sandbox bwrap)');
  });
});

describe('a starting content whose gate needs a program the sandbox lacks', () => {
  itWith('docker')('stops init with the image that ran it and how to choose another, one line each', async () => {
    const from = await source(baseManifest({ verify: { ...(baseManifest().verify as object), test: 'python3 -m pytest -q tests' } }));
    const world = join(dirname(from), 'w.world');
    const init = await genesis(['init', '--world', world, '--from', from]);
    expect(init.status).not.toBe(0);
    const lines = init.stderr.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toBe('genesis: verify.test needs python3, which the docker image genesis/node:20 that ran it does not have [gate-program-missing]');
    expect(lines[1]).toContain('verify.image (genesis/python:3 has python3 and pytest');
    expect(lines[1]).toContain('init --sandbox bwrap');
  });

  itWith('bwrap')("names this machine's programs when bubblewrap ran it", async () => {
    const from = await source(baseManifest({ verify: { ...(baseManifest().verify as object), setup: 'genesis-no-such-tool --version' } }));
    const init = await genesis(['init', '--world', join(dirname(from), 'w.world'), '--from', from, '--sandbox', 'bwrap']);
    expect(init.stderr).toContain(
      "verify.setup needs genesis-no-such-tool, which the bwrap sandbox (this machine's programs) that ran it does not have [gate-program-missing]",
    );
    expect(init.stderr).toContain('install genesis-no-such-tool on this machine, or gate in an image that has it');
  });

  itWith('docker')('is an ordinary failed gate when the command exits 127 without a missing program', async () => {
    const from = await source(baseManifest({ verify: { ...(baseManifest().verify as object), test: 'echo "python3: not found, said nobody"; exit 127' } }));
    const init = await genesis(['init', '--world', join(dirname(from), 'w.world'), '--from', from]);
    expect(init.stderr).toContain('[initial-commit-failed]');
  });
});
