import { execFile } from 'node:child_process';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { AuditReport } from '../../../src/audit/index.js';
import { runEmbedded } from '../../../src/compose/embedded-run.js';
import { git, gitValue } from '../../../src/git/git.js';
import type { WorldRepo } from '../../../src/world/world-repo.js';
import { LocalWorld } from '../../../src/world/local-world.js';
import { BAD_A, baseManifest, GOOD_A, GOOD_B, makeWorld } from '../../helpers/world-fixture.js';

const BIN = fileURLToPath(new URL('../../../bin/genesis.js', import.meta.url));
const run = promisify(execFile);

/**
 * A world `genesis run` built for real (bwrap): task a rejected once then accepted, task b
 * accepted; three accepted commits, three episodes. Built once per file and copied per test,
 * since each test tampers with its copy.
 */
export async function buildAuditedWorld(): Promise<{ path: string; copy(): Promise<WorldRepo>; dispose(): Promise<void> }> {
  const f = await makeWorld({
    sandbox: 'bwrap',
    manifest: baseManifest({ verify: { sandbox: 'bwrap', test: 'node --test test/base.test.js', timeoutSec: 60 } }),
    recording: { a: [{ write: { 'src/a.js': BAD_A } }, { write: { 'src/a.js': GOOD_A } }], b: [{ write: { 'src/b.js': GOOD_B } }] },
  });
  await runEmbedded({ world: f.world, sandbox: f.sandbox });
  // makeWorld's directory goes when the current test ends; this copy lives as long as the file.
  const keep = await mkdtemp(join(tmpdir(), 'genesis-audit-world-'));
  await cp(f.world.path, join(keep, 'w.world'), { recursive: true });
  const path = join(keep, 'w.world');
  return {
    path,
    // Copies live under the same directory, so tests may run concurrently and still be cleaned up.
    async copy() {
      const into = await mkdtemp(join(keep, 'copy-'));
      await cp(path, join(into, 'w.world'), { recursive: true });
      return LocalWorld.open(join(into, 'w.world'));
    },
    dispose: () => rm(keep, { recursive: true, force: true }),
  };
}

/** `genesis audit --json` on a world: its exit code and report. */
export async function auditCli(world: string, args: string[] = []): Promise<{ code: number; report: AuditReport; stderr: string }> {
  const result = await run(process.execPath, [BIN, 'audit', '--world', world, '--json', ...args], { maxBuffer: 64 * 1024 * 1024 }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
  return { code: result.code, report: JSON.parse(result.stdout || 'null') as AuditReport, stderr: result.stderr };
}

/**
 * Puts a commit on the accepted branch the way no Genesis code does: straight through git, with
 * the given files changed on top of `parent` (default: the head) and any message (trailers too).
 */
export async function commitAroundTheGate(world: WorldRepo, files: Record<string, string>, message: string, parents?: string[]): Promise<string> {
  const head = await world.head('main');
  const env = { GIT_INDEX_FILE: join(world.path, 'tamper.index') };
  await git(['read-tree', parents?.[0] ?? head], { cwd: world.path, env });
  for (const [path, content] of Object.entries(files)) {
    const blob = await gitValue(['hash-object', '-w', '--stdin'], { cwd: world.path, input: content });
    await git(['update-index', '--add', '--cacheinfo', `100644,${blob},${path}`], { cwd: world.path, env });
  }
  const tree = await gitValue(['write-tree'], { cwd: world.path, env });
  const commit = await world.commitTree(tree, parents ?? [head], message);
  await world.setRef('refs/heads/main', commit);
  return commit;
}

/** The codes of a report's findings, sorted, for comparison. */
export function codesOf(report: AuditReport): string[] {
  return report.findings.map((f) => f.code).sort();
}
