import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { expect } from 'vitest';
import { stringify } from 'yaml';
import { auditWorld } from '../../../src/audit/index.js';
import { createSandbox } from '../../../src/sandbox/create-sandbox.js';
import type { Sandbox } from '../../../src/sandbox/sandbox.js';
import type { RunSummary } from '../../../src/schedule/run/ports/events.js';
import { runEmbedded } from '../../../src/compose/embedded-run.js';
import { readAcceptedHistory, type AcceptedCommit } from '../../../src/world/history/accepted-history.js';
import type { EpisodeArtifacts, EpisodeRecord } from '../../../src/ledger/episode-record.js';
import { initWorld } from '../../../src/operations/init-world.js';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import type { WorldRepo } from '../../../src/world/world-repo.js';

/** A module and the acceptance test that wants it to export `v = <id>`: what an honest agent writes. */
export function honestTask(id: string): { files: Record<string, string>; task: Record<string, unknown> } {
  return {
    files: {
      [`test/${id}.test.js`]: `import test from 'node:test';\nimport assert from 'node:assert';\nimport { v } from '../src/${id}.js';\ntest('${id}', () => assert.equal(v, '${id}'));\n`,
    },
    task: { id, title: `module ${id}`, paths: [`src/${id}.js`], check: `node --test test/${id}.test.js` },
  };
}

export const BASE_FILES: Record<string, string> = {
  'package.json': '{ "type": "module" }\n',
  'src/README.md': 'modules live here\n',
  'test/base.test.js': "import test from 'node:test';\ntest('the world is sane', () => {});\n",
};

/** One world run to its end, with everything the tests of its attacks read afterwards. */
export interface AttackedWorld {
  root: string;
  world: WorldRepo;
  sandbox: Sandbox;
  initial: string;
  summary: RunSummary;
  durationMs: number;
  history: AcceptedCommit[];
  episodes: EpisodeRecord[];
  /** The one counted episode of a task (attacks get one attempt; abandoned episodes are not attempts). */
  episodeOf(task: string): EpisodeRecord;
  artifactsOf(task: string): Promise<EpisodeArtifacts>;
  dispose(): Promise<void>;
}

/**
 * Creates a world (real git, real sandbox, through initWorld) under `root`, runs it to its end
 * with runWorld, and keeps it until `dispose`: the tests of one world share one run.
 */
export async function runAttackedWorld(opts: {
  /** From {@link attackRoot}: holds the world, its source, and whatever the attacks write outside. */
  root: string;
  manifest: Record<string, unknown>;
  files: Record<string, string>;
  sandbox: 'bwrap' | 'docker';
}): Promise<AttackedWorld> {
  try {
    return await runInRoot(opts);
  } catch (error) {
    // A world that failed to run has no AttackedWorld to dispose of: clean up here.
    await rm(opts.root, { recursive: true, force: true });
    throw error;
  }
}

async function runInRoot(opts: Parameters<typeof runAttackedWorld>[0]): Promise<AttackedWorld> {
  const { root } = opts;
  const source = join(root, 'source');
  for (const [path, content] of Object.entries({ ...BASE_FILES, ...opts.files, 'world.yaml': stringify(opts.manifest) })) {
    await mkdir(dirname(join(source, path)), { recursive: true });
    await writeFile(join(source, path), content);
  }
  const sandbox = await createSandbox(opts.sandbox, { image: 'genesis/node:20' });
  const { world, commit } = await initWorld({ worldPath: join(root, 'w.world'), from: source, sandbox: async () => sandbox });
  const started = Date.now();
  const summary = await runEmbedded({ world, sandbox });
  const durationMs = Date.now() - started;
  const ledger = new GitLedger(world.path);
  const episodes = await ledger.readAll();
  const episodeOf = (task: string): EpisodeRecord => {
    // An abandoned episode (a verifier that died under load) is not an attempt: the task runs again.
    const found = episodes.filter((e) => e.task === task && e.outcome !== 'abandoned');
    if (found.length !== 1) {
      const seen = episodes.filter((e) => e.task === task).map((e) => `${e.outcome} (${e.reason}: ${e.message})`);
      throw new Error(`task ${task} has ${found.length} counted episodes, expected 1; all of its episodes: ${seen.join('; ') || 'none'}`);
    }
    return found[0]!;
  };
  return {
    root,
    world,
    sandbox,
    initial: commit,
    summary,
    durationMs,
    episodes,
    episodeOf,
    history: await readAcceptedHistory(world.path, 'main'),
    artifactsOf: (task) => ledger.readArtifacts(episodeOf(task).id),
    dispose: () => rm(root, { recursive: true, force: true }),
  };
}

/**
 * A directory for one attacked world, outside vitest's per-test clean-up (its tests share it),
 * with a `markers/` directory that attacks write to when something runs that never should.
 */
export async function attackRoot(): Promise<{ root: string; markers: string }> {
  const root = await mkdtemp(join(tmpdir(), 'genesis-adversarial-'));
  await mkdir(join(root, 'markers'));
  return { root, markers: join(root, 'markers') };
}

/** genesis audit of the world finds no violation (sampling no gate to run again): what every attacked world must leave. */
export async function expectAuditHolds(world: WorldRepo): Promise<void> {
  const report = await auditWorld({ world, sample: 0 });
  expect(report.violations, JSON.stringify(report.findings)).toBe(0);
}
