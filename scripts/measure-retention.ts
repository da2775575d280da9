/**
 * What two rejected 300 MB files cost a world: two tasks whose agents each
 * write a 300 MB random file and whose check fails. With the default limits they are refused
 * before git reads them; with limits raised to let them in, they stay through the ledger until
 * `genesis prune` drops them. Prints the orchestrator's peak memory and the object store's size
 * after the run, after `git gc`, and after a prune that keeps nothing.
 *
 *   node --import tsx scripts/measure-retention.ts [default|raised]
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { stringify } from 'yaml';
import { createSandbox } from '../src/sandbox/create-sandbox.js';
import { runEmbedded } from '../src/compose/embedded-run.js';
import { initWorld } from '../src/operations/init-world.js';
import { GitLedger } from '../src/ledger/git-ledger.js';
import { pruneRejectedChanges } from '../src/ledger/prune.js';

const raised = process.argv[2] === 'raised';
const root = await mkdtemp(join(tmpdir(), 'genesis-retention-'));
try {
  const source = join(root, 'source');
  const agent = '#!/bin/sh\nhead -c 314572800 /dev/urandom > "src/$GENESIS_TASK_ID.bin"\n';
  const manifest = {
    name: 'retention',
    goal: { outcome: 'nothing: every change is rejected' },
    verify: { sandbox: 'bwrap', test: 'true', timeoutSec: 300, ...(raised ? { maxFileKb: 409600, maxChangeKb: 819200 } : {}) },
    protected: ['world.yaml', '.genesis/**'],
    agent: { kind: 'command', command: ['sh', '.genesis/agent.sh'], timeoutSec: 300, sandbox: 'none' },
    retry: { maxAttempts: 1 },
    parallelism: 1,
    tasks: ['a', 'b'].map((id) => ({ id, title: id, paths: [`src/${id}.bin`], check: 'false' })),
  };
  for (const [path, text] of Object.entries({ 'world.yaml': stringify(manifest), '.genesis/agent.sh': agent, 'src/README.md': 'x\n' })) {
    await mkdir(dirname(join(source, path)), { recursive: true });
    await writeFile(join(source, path), text);
  }
  const sandbox = await createSandbox('bwrap', { image: 'genesis/node:20' });
  const { world } = await initWorld({ worldPath: join(root, 'w.world'), from: source, sandbox: async () => sandbox });
  const start = process.memoryUsage().rss;
  let peak = start;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
  await runEmbedded({ world, sandbox });
  clearInterval(sampler);
  const objects = () =>
    Number(
      execFileSync('du', ['-sb', join(world.path, 'objects')])
        .toString()
        .split('\t')[0],
    );
  const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
  const records = await new GitLedger(world.path).readAll();
  console.log(`limits: ${raised ? 'raised (400 MB per file)' : 'default (1 MB per file)'}`);
  console.log(`episodes: ${records.map((r) => `${r.task} ${r.outcome} (${r.reason})`).join(', ')}`);
  console.log(`orchestrator memory: ${mb(start)} at start, ${mb(peak)} at peak`);
  console.log(`object store after the run: ${mb(objects())}`);
  execFileSync('git', ['gc', '--quiet'], { cwd: world.path });
  console.log(`after git gc: ${mb(objects())}`);
  const report = await pruneRejectedChanges(world.path, { keepMs: 0 });
  console.log(`after genesis prune --keep-days 0 (${report.pruned.length} changes dropped): ${mb(objects())}`);
} finally {
  await rm(root, { recursive: true, force: true });
}
