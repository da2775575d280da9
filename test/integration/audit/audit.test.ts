import { writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { worldKeyOf } from '../../../src/queue/bullmq/distributed-job.js';
import { IntegratorLock } from '../../../src/queue/redis/integrator-lock.js';
import { connectRedis } from '../../../src/queue/redis/connection.js';
import { gitValue } from '../../../src/git/git.js';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { startCli } from '../../helpers/cli-process.js';
import { itWith } from '../../helpers/services.js';
import { BAD_A, GOOD_A } from '../../helpers/world-fixture.js';
import { auditCli, buildAuditedWorld, codesOf, commitAroundTheGate } from './audited-world.js';

let built: Awaited<ReturnType<typeof buildAuditedWorld>>;
beforeAll(async () => {
  built = await buildAuditedWorld();
}, 120_000);
afterAll(() => built?.dispose());

const copy = () => built.copy();

describe('genesis audit on a world genesis run built', () => {
  itWith('bwrap')('passes, having verified every accepted commit again', async () => {
    const { code, report } = await auditCli(built.path);
    expect(report.findings).toEqual([]);
    expect(code).toBe(0);
    expect(report).toMatchObject({ commits: 3, episodes: 3, running: 0, violations: 0, reverified: { commits: 3, of: 3, sandbox: 'bwrap' } });
  });

  itWith('bwrap')('verifies the same seeded sample each time, and none with --sample 0', async () => {
    const [one, two, none] = await Promise.all([
      auditCli(built.path, ['--sample', '2', '--seed', '7']),
      auditCli(built.path, ['--sample', '2', '--seed', '7']),
      auditCli(built.path, ['--sample', '0']),
    ]);
    expect(one.report.reverified.list).toHaveLength(2);
    expect(two.report.reverified.list).toEqual(one.report.reverified.list);
    expect(none.report.reverified).toMatchObject({ commits: 0, of: 3, list: [] });
  });

  itWith('bwrap')('passes a task a person added with genesis task add, the other way onto the branch', async () => {
    const world = await copy();
    const add = startCli(['task', 'add', 'c', '--world', world.path, '--title', 'module c', '--paths', 'src/c.js']);
    expect(await add.exited).toBe(0);
    const { code, report } = await auditCli(world.path, ['--sample', '1', '--seed', '1']);
    expect(report.findings).toEqual([]);
    expect(code).toBe(0);
    expect(report.commits).toBe(4);
  });

  itWith('bwrap')('refuses a negative sample as wrong usage', async () => {
    const { code, stderr } = await auditCli(built.path, ['--sample', '-1']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/--sample must be a whole number of at least 0/);
  });
});

describe('genesis audit on a world someone tampered with', () => {
  itWith('bwrap')('finds a commit that reached the branch around the gate, and that its tree fails its tests', async () => {
    const world = await copy();
    const commit = await commitAroundTheGate(world, { 'src/a.js': BAD_A }, 'quick fix\n');
    const { code, report } = await auditCli(world.path);
    expect(code).toBe(7);
    expect(codesOf(report)).toEqual(['reverify-failed', 'unattributed-commit']);
    expect(report.findings.every((f) => f.commit === commit)).toBe(true);
    // The done tasks' checks run as one step (check:a+b); the failing test named is a's.
    expect(report.findings.find((f) => f.code === 'reverify-failed')?.message).toMatch(/check-failed: check:a\+b failed .*: a says a/);
  });

  itWith('bwrap')('finds a forged trailer naming a rejected episode on a commit that edits a protected test', async () => {
    const world = await copy();
    const rejected = (await new GitLedger(world.path).readAll()).find((e) => e.outcome === 'rejected')!;
    const message = `a: module a\n\nGenesis-Episode: ${rejected.id}\nGenesis-Task: a\nGenesis-Attempt: 1\nGenesis-Agent: script\nGenesis-Verified: trust me\n`;
    await commitAroundTheGate(world, { 'test/a.test.js': "import test from 'node:test';\ntest('ok', () => {});\n" }, message);
    const { code, report } = await auditCli(world.path, ['--sample', '0']);
    expect(code).toBe(7);
    // task a already landed, so this is also its second landing (a warning on its own).
    expect(codesOf(report)).toEqual(['ledger-mismatch', 'outside-task-paths', 'protected-path-changed', 'task-landed-twice']);
    expect(report.findings.find((f) => f.code === 'ledger-mismatch')?.message).toMatch(
      /outcome is rejected, not accepted; its gate did not pass; the record names commit none/,
    );
    expect(report.findings.find((f) => f.code === 'protected-path-changed')?.message).toContain('"test/a.test.js"');
  });

  itWith('bwrap')('finds a merge on the accepted history', async () => {
    const world = await copy();
    const head = await world.head('main');
    const side = await world.commitTree(await world.treeOf(head), [`${head}~1`], 'side\n');
    await commitAroundTheGate(world, { 'src/a.js': GOOD_A }, 'merge\n', [head, side]);
    const { code, report } = await auditCli(world.path, ['--sample', '0']);
    expect(code).toBe(7);
    expect(codesOf(report)).toContain('merge-commit');
  });

  itWith('bwrap')('finds an accepted episode whose commit the branch no longer holds', async () => {
    const world = await copy();
    await world.setRef('refs/heads/main', await gitValue(['rev-parse', 'main~1'], { cwd: world.path }));
    const { code, report } = await auditCli(world.path, ['--sample', '0']);
    expect(code).toBe(7);
    expect(codesOf(report)).toEqual(['accepted-not-on-branch']);
    expect(report.findings[0]!.hint).toMatch(/moved back or rewritten/);
  });

  itWith('bwrap')('reports a damaged ledger record instead of failing on it', async () => {
    const world = await copy();
    const blob = await gitValue(['hash-object', '-w', '--stdin'], { cwd: world.path, input: '{ not json' });
    const tree = await gitValue(['mktree'], { cwd: world.path, input: `100644 blob ${blob}\trecord.json\n` });
    await world.setRef('refs/genesis/episodes/zz-damaged', await world.commitTree(tree, [], 'damaged\n'));
    const { code, report } = await auditCli(world.path, ['--sample', '0']);
    expect(code).toBe(7);
    expect(report.findings).toMatchObject([{ code: 'ledger-record-unreadable', episode: 'zz-damaged' }]);
    expect(report.findings[0]!.message).toMatch(/record\.json is not JSON/);
  });
});

describe('genesis audit when an episode is still recorded as running', () => {
  async function withOpenEpisode() {
    const world = await copy();
    const ledger = new GitLedger(world.path);
    const [last] = (await ledger.readAll()).slice(-1);
    // Cut short before its gate: a record whose gate passed would instead rejoin the integration queue.
    await ledger.write({ ...last!, id: 'zz-open', status: 'running', outcome: null, commit: null, reason: null, endedAt: null, gate: null });
    return world;
  }

  itWith('bwrap')('warns when no run holds the world, says that genesis run closes it, and genesis run does', async () => {
    const world = await withOpenEpisode();
    const before = await auditCli(world.path, ['--sample', '0']);
    expect(before.code).toBe(0);
    expect(before.report).toMatchObject({
      running: 1,
      violations: 0,
      warnings: 1,
      findings: [{ code: 'episode-open', severity: 'warning', episode: 'zz-open' }],
    });
    expect(before.report.findings[0]!.hint).toMatch(/`genesis run` closes them as abandoned/);
    const run = startCli(['run', '--world', world.path]);
    expect(await run.exited).toBe(0);
    const after = await auditCli(world.path, ['--sample', '0']);
    expect(after.report.findings).toEqual([]);
    expect((await new GitLedger(world.path).read('zz-open'))?.outcome).toBe('abandoned');
  });

  itWith('bwrap')('says nothing about it while a run holds the world', async () => {
    const world = await withOpenEpisode();
    await writeFile(join(world.scratchDir, 'run.lock'), `${hostname()} ${process.pid}\n`);
    const { code, report } = await auditCli(world.path, ['--sample', '0']);
    expect(code).toBe(0);
    expect(report.findings).toEqual([]);
    expect(report.runHolder).toBe(`genesis run on ${hostname()} (pid ${process.pid})`);
  });

  itWith('redis')("names a distributed run that holds the world's integrator lock, read from --redis", async () => {
    const world = await withOpenEpisode();
    const { name } = await world.manifestAt('HEAD');
    const url = 'redis://127.0.0.1:6379';
    const redis = await connectRedis(url, { name: 'genesis-test' });
    const lock = await IntegratorLock.acquire(redis, worldKeyOf(name, world.path), { owner: { host: 'elsewhere', pid: 4242 } });
    try {
      const held = await auditCli(world.path, ['--sample', '0', '--redis', url]);
      expect(held.report.runHolder).toBe('a distributed genesis run on elsewhere (pid 4242)');
      expect(held.report.findings).toEqual([]);
      // Without --redis the audit cannot know, so the open episode is a warning again.
      const blind = await auditCli(world.path, ['--sample', '0']);
      expect(blind.report).toMatchObject({ runHolder: null, warnings: 1 });
    } finally {
      await lock.release();
      redis.disconnect();
    }
  });
});
