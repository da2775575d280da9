import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { runDoctorChecks, type DoctorCheck } from '../../../src/cli/commands/doctor/checks.js';
import { doctorExitCode, formatDoctorReport } from '../../../src/cli/commands/doctor/report.js';
import { itWith } from '../../helpers/services.js';
import { tempDir } from '../../helpers/temp-dir.js';

// MOVE: these test src/cli/commands/doctor/doctor*.ts; they belong in test/integration/cli/.

/** A bare world whose main branch holds just this world.yaml (no gate ran: doctor must not need one). */
async function worldWith(manifest: string): Promise<string> {
  const repo = join(await tempDir('genesis-doctor-'), 'w.world');
  const run = (args: string[], input?: string) => execFileSync('git', args, { cwd: repo, input, encoding: 'utf8' }).trim();
  execFileSync('git', ['init', '--bare', '-q', '-b', 'main', repo]);
  const blob = run(['hash-object', '-w', '--stdin'], manifest);
  const tree = run(['mktree'], `100644 blob ${blob}\tworld.yaml\n`);
  const commit = run(['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit-tree', tree, '-m', 'world']);
  run(['update-ref', 'refs/heads/main', commit]);
  return repo;
}

const manifest = (verify: string) => `
name: doc
goal: { outcome: nothing }
verify: { test: "true", ${verify} }
agent: { kind: script, script: r.yaml }
tasks: [{ id: a, title: a, paths: [a.js] }]
`;

const byName = (checks: DoctorCheck[]) => Object.fromEntries(checks.map((c) => [c.name, c]));
const UNUSED_REDIS = 'redis://127.0.0.1:1';

describe('genesis doctor', () => {
  itWith('docker')('finds everything a world with the auto sandbox needs on a machine set up by setup-services', async () => {
    const world = await worldWith(manifest('sandbox: auto'));
    const checks = await runDoctorChecks({ world, redis: 'redis://127.0.0.1:6379', redisNeeded: true });
    expect(checks.map((c) => [c.name, c.status])).toEqual([
      ['node', 'ok'],
      ['git', 'ok'],
      ['docker', 'ok'],
      ['image', 'ok'],
      ['bwrap', 'ok'],
      ['confines', 'ok'],
      ['deps-cache', 'ok'],
      ['redis', 'ok'],
      ['world', 'ok'],
      // ok, or warn for a CLI on this PATH at a version the suite does not cover (test/integration/cli/doctor-agent-clis.test.ts).
      ['agent-clis', expect.stringMatching(/^(ok|warn)$/)],
    ]);
    expect(byName(checks).world!.detail).toContain('world.yaml is valid (1 tasks, sandbox auto, agent script)');
    expect(doctorExitCode(checks)).toBe(0);
  });

  itWith('docker')('fails on a sandbox image the world needs that is not built, and says how to build it', async () => {
    const world = await worldWith(manifest('sandbox: docker, image: "genesis/not-built:0"'));
    const checks = byName(await runDoctorChecks({ world, redis: UNUSED_REDIS, redisNeeded: false }));
    expect(checks.docker!.status).toBe('ok');
    expect(checks.image).toMatchObject({
      status: 'fail',
      detail: 'genesis/not-built:0 is not built',
      hint: expect.stringContaining('docker build -t genesis/not-built:0'),
    });
    expect(checks.bwrap!.status).toBe('ok');
  });

  itWith('bwrap')("checks where a world's agents run: confined by default, a warning for agent.sandbox none", async () => {
    const world = (sandbox: string) =>
      worldWith(`
name: doc
goal: { outcome: nothing }
verify: { test: "true" }
agent: { kind: command, command: [sh, agent.sh]${sandbox} }
tasks: [{ id: a, title: a, paths: [a.js] }]
`);
    const confined = byName(await runDoctorChecks({ world: await world(''), redis: UNUSED_REDIS, redisNeeded: false }));
    expect(confined['agent-sandbox']).toMatchObject({ status: 'ok', detail: expect.stringContaining('network namespace of their own') });
    const open = byName(await runDoctorChecks({ world: await world(', sandbox: none'), redis: UNUSED_REDIS, redisNeeded: false }));
    expect(open['agent-sandbox']).toMatchObject({
      status: 'warn',
      detail: expect.stringContaining('agent.sandbox is "none"'),
      hint: expect.stringContaining('remove agent.sandbox'),
    });
  });

  it('lists every issue of a broken manifest and exits 1', async () => {
    const world = await worldWith('name: bad\ngoal: {}\nverify: {}\nagent: { kind: telepathy }\n');
    const checks = await runDoctorChecks({ world, redis: UNUSED_REDIS, redisNeeded: false });
    const check = byName(checks).world!;
    expect(check.status).toBe('fail');
    expect(check.detail).toContain('goal.outcome');
    expect(check.detail).toContain('verify.test');
    expect(check.detail).toContain('agent.kind');
    expect(doctorExitCode(checks)).toBe(1);
  });

  it('fails on a path that is not a world, with how to make one', async () => {
    const checks = byName(await runDoctorChecks({ world: join(await tempDir(), 'none'), redis: UNUSED_REDIS, redisNeeded: false }));
    expect(checks.world).toMatchObject({ status: 'fail', hint: expect.stringContaining('genesis init') });
  });

  it('only warns about an unreachable Redis unless Redis was asked for', async () => {
    const quiet = byName(await runDoctorChecks({ redis: UNUSED_REDIS, redisNeeded: false }));
    expect(quiet.redis).toMatchObject({ status: 'warn', detail: expect.stringContaining('needed only for --redis') });
    const asked = byName(await runDoctorChecks({ redis: UNUSED_REDIS, redisNeeded: true }));
    expect(asked.redis).toMatchObject({ status: 'fail', detail: `no answer at ${UNUSED_REDIS}` });
  });

  it('prints one line per check and what to do under each problem', () => {
    const text = formatDoctorReport([
      { name: 'node', status: 'ok', detail: '20.20.2', hint: null },
      { name: 'redis', status: 'warn', detail: 'no answer', hint: 'start it' },
      { name: 'world', status: 'fail', detail: 'issues:\n  - goal.outcome: required', hint: 'fix them' },
    ]);
    expect(text.split('\n')).toEqual([
      'ok    node   20.20.2',
      'warn  redis  no answer',
      '             what to do: start it',
      'FAIL  world  issues:',
      '               - goal.outcome: required',
      '             what to do: fix them',
      '',
      '1 problem to fix and 1 warning: Genesis cannot run here yet.',
    ]);
  });

  itWith('docker')('runs from the command line with --json and exits 0 when nothing needed is missing', async () => {
    const result = await execa('node', ['bin/genesis.js', 'doctor', '--json'], { reject: false, cwd: join(import.meta.dirname, '../../..') });
    expect(result.exitCode, result.stderr).toBe(0);
    const checks = JSON.parse(result.stdout) as DoctorCheck[];
    expect(checks.map((c) => c.name)).toEqual(['node', 'git', 'docker', 'image', 'bwrap', 'confines', 'deps-cache', 'redis', 'agent-clis']);
    // Without a world, the default one is assumed: gates in docker here, agents (command agents by default) in bubblewrap.
    expect(checks.find((c) => c.name === 'confines')).toMatchObject({
      status: 'ok',
      detail: 'gates: a container with no network (docker)\nagents: bubblewrap with a network namespace of their own, as a leased unprivileged uid',
    });
  });
});
