import { execFileSync } from 'node:child_process';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readAcceptedHistory } from '../../../src/world/history/accepted-history.js';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { startCli } from '../../helpers/cli-process.js';
import { bwrapAnswers } from '../../helpers/services.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { baseManifest, GOOD_A, makeWorld } from '../../helpers/world-fixture.js';
import { genesis } from '../../helpers/genesis-cli.js';

// One world for every finding: a done by an episode, b added by task add, then an amendment.
let world = '';
beforeAll(async () => {
  if (!bwrapAnswers()) return;
  const built = await makeWorld({
    sandbox: 'bwrap',
    manifest: baseManifest({ tasks: [{ id: 'a', title: 'module a', paths: ['src/a.js'], check: 'node --test test/a.test.js' }] }),
    recording: { a: [{ write: { 'src/a.js': GOOD_A } }] },
  });
  // makeWorld's folder goes when the first test ends: keep a copy for all of them.
  world = join(await mkdtemp(join(tmpdir(), 'genesis-findings-')), 'w.world');
  await cp(built.world.path, world, { recursive: true });
  expect((await genesis(['run', '--world', world, '--sandbox', 'bwrap'])).status).toBe(0);
  expect((await genesis(['task', 'add', 'b', '--world', world, '--title', 'module b', '--paths', 'src/b.js'])).status).toBe(0);
  const clone = join(await tempDir('genesis-findings-'), 'clone');
  execFileSync('git', ['clone', '-q', world, clone]);
  await writeFile(join(clone, 'NOTES.md'), 'notes\n');
  const amend = await genesis(['amend', '--world', world, '--from', clone, '--message', 'add notes', '--sandbox', 'bwrap']);
  expect(amend.status, amend.stderr).toBe(0);
}, 180_000);

afterAll(async () => {
  if (world) await rm(join(world, '..'), { recursive: true, force: true });
});

describe('the smaller findings of a first day', () => {
  it('labels each commit of genesis log by what made it, and shows no score column outside ratchet worlds', async () => {
    const log = await genesis(['log', '--world', world]);
    expect(log.status, log.stderr).toBe(0);
    const lines = log.stdout.trim().split('\n');
    expect(lines[0]).not.toMatch(/\bscore\b/);
    expect(lines[1]).toContain('(amend) add notes');
    expect(lines[2]).toContain('(task add) b');
    expect(lines[3]).toMatch(/ a +1 /);
    expect(lines[4]).toContain('(init)');
    // Each row names the sandbox and the counts of the verdict the commit landed on, and fits the width.
    expect(lines[3]).toMatch(/ bwrap · 1\/1 tests · 1 check ok$/);
    expect(lines[4]).toMatch(/ bwrap · 1\/1 tests$/);
    const narrow = await genesis(['log', '--world', world], { env: { COLUMNS: '80' } });
    for (const line of narrow.stdout.trim().split('\n')) expect(line.length).toBeLessThanOrEqual(80);
    const json = JSON.parse((await genesis(['log', '--world', world, '--json'])).stdout) as Array<{ made: string; verdict: string }>;
    expect(json.map((c) => c.made)).toEqual(['amend', 'task-add', 'episode', 'init']);
    expect(json[2]!.verdict).toMatch(/^bwrap: test ok 1 passed 0 failed; check:a ok 1 passed 0 failed \(/);
  });

  it('shows the initial commit and an amendment, and an episode by a prefix of its id', async () => {
    const history = await readAcceptedHistory(world, 'main');
    const initial = await genesis(['show', '--world', world, history.at(-1)!.commit.slice(0, 10)]);
    expect(initial.status, initial.stderr).toBe(0);
    expect(initial.stdout).toContain("the world's first commit (genesis init)");
    expect(initial.stdout).toContain('test/a.test.js');
    const amended = await genesis(['show', '--world', world, 'HEAD']);
    expect(amended.stdout).toMatch(/an amendment \(genesis amend\): .*: add notes/);
    const [episode] = await new GitLedger(world).readAll();
    const byPrefix = await genesis(['show', '--world', world, episode!.id.slice(0, -4)]);
    expect(byPrefix.status, byPrefix.stderr).toBe(0);
    expect(byPrefix.stdout).toContain(`episode ${episode!.id}: task a, attempt 1, accepted`);
    // Each gate step with its time and why it ran.
    expect(byPrefix.stdout).toMatch(/── gate steps \(bwrap\)[^\n]*\ntest +\d+\.\d\ds {2}ok, \d+ passed 0 failed {2}\(the change\)\n/);
  });

  it('refuses bad list flags as usage errors (exit 2) naming the flag', async () => {
    for (const args of [
      ['episodes', '--outcome', 'bogus'],
      ['episodes', '--limit', 'abc'],
      ['log', '--limit', 'abc'],
      ['log', '--limit', '0'],
    ]) {
      const r = await genesis([...args, '--world', world]);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stderr).toContain(args[1]);
    }
    const limited = JSON.parse((await genesis(['episodes', '--world', world, '--outcome', 'accepted', '--limit', '1', '--json'])).stdout) as unknown[];
    expect(limited).toHaveLength(1);
  });

  it('fails genesis doctor --world when the agent binary is missing, and passes it when it exists', async () => {
    const missing = await makeWorld({
      sandbox: 'bwrap',
      manifest: baseManifest({ agent: { kind: 'command', command: ['genesis-agent-that-does-not-exist'], sandbox: 'none' } }),
      recording: {},
    });
    const bad = await genesis(['doctor', '--world', missing.world.path, '--json']);
    expect(bad.status).toBe(1);
    const agent = (JSON.parse(bad.stdout) as Array<{ name: string; status: string; detail: string }>).find((c) => c.name === 'agent');
    expect(agent).toMatchObject({ status: 'fail', detail: expect.stringContaining('genesis-agent-that-does-not-exist') });
    const present = await makeWorld({
      sandbox: 'bwrap',
      manifest: baseManifest({ agent: { kind: 'command', command: ['sh', '-c', 'true'], sandbox: 'none' } }),
      recording: {},
    });
    const good = JSON.parse((await genesis(['doctor', '--world', present.world.path, '--json'])).stdout) as Array<{ name: string; status: string }>;
    expect(good.find((c) => c.name === 'agent')).toMatchObject({ status: 'ok' });
  });

  it('stops genesis serve within a second of Ctrl-C while an event stream is open', async () => {
    const serve = startCli(['serve', '--world', world, '--port', '0']);
    const url = /(http:\S+)/.exec(await serve.waitFor(/genesis serve: http/))![1]!;
    const response = await fetch(`${url}api/events`);
    const reader = response.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toContain('event: hello');
    const t0 = Date.now();
    serve.child.kill('SIGINT');
    expect(await serve.exited).toBe(0);
    expect(Date.now() - t0).toBeLessThan(1000);
    await reader.cancel().catch(() => undefined);
  });
});
