import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { git } from '../../../src/git/git.js';
import { itWith } from '../../helpers/services.js';
import { expectOneClearError, genesis, refsOf, writeSource } from './bad-input-cli.js';

/** A port nothing listens on now. */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** `work` until `done` says its result will do, for a few seconds (a daemon just started). */
async function poll<T>(work: () => Promise<T>, done: (r: T) => boolean): Promise<T> {
  for (let i = 0; ; i++) {
    const r = await work();
    if (done(r) || i === 20) return r;
    await new Promise((wake) => setTimeout(wake, 250));
  }
}

let root: string;
let world: string;
let n = 0;
const fresh = () => join(root, `case-${++n}`);

const RECORDING = 'tasks:\n  a: [{ write: { "src/a.js": "export const a = 1;\\n" } }]\n';
/** A manifest that is right, as text; each case breaks one thing in it. */
const good = (overrides = '') => `name: bad-input
goal: { outcome: "module a exists" }
verify: { sandbox: bwrap, image: "genesis/no-such-image:0", test: "test -f world.yaml" }
agent: { kind: script, script: recording.yaml }
${overrides}`;
const TASK_A = 'tasks:\n  - { id: a, title: "module a", paths: [src/a.js] }\n';

/** `genesis init` from a source whose world.yaml is `yaml`: the error it gives, and that nothing was created. */
async function initFails(yaml: string, code = 'manifest-invalid'): Promise<string> {
  const source = await writeSource(fresh(), yaml, { 'recording.yaml': RECORDING });
  const target = join(source, '..', `${source.split('/').pop()}.world`);
  const result = await genesis(['init', '--world', target, '--from', source]);
  const { problem } = expectOneClearError(result, code);
  expect(existsSync(target), 'init left a world behind').toBe(false);
  return problem;
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'genesis-bad-input-'));
  const source = await writeSource(join(root, 'good'), good(TASK_A), { 'recording.yaml': RECORDING });
  world = join(root, 'good.world');
  const made = await genesis(['init', '--world', world, '--from', source]);
  if (made.code !== 0) throw new Error(made.stderr);
}, 60_000);
afterAll(() => rm(root, { recursive: true, force: true }));

describe.concurrent('genesis init refuses a bad world.yaml with one clear error and creates nothing', () => {
  itWith('bwrap')('when it is not YAML, giving the line', async () => {
    expect(await initFails(good(TASK_A).replace('goal: { outcome: "module a exists" }', 'goal: { outcome: "module a exists"'))).toMatch(
      /world\.yaml is not valid YAML \(line \d+\)/,
    );
  });

  itWith('bwrap')('when it has unknown fields, naming each by its full path', async () => {
    const problem = await initFails(good(`${TASK_A}colour: blue\n`).replace('test: "test -f world.yaml"', 'test: "test -f world.yaml", tset: "x"'));
    expect(problem).toContain('- verify.tset: unknown field; remove it or check its spelling');
    expect(problem).toContain('- colour: unknown field; remove it or check its spelling');
  });

  itWith('bwrap')('when a field has the wrong type, naming the field and the type expected', async () => {
    expect(await initFails(good(`${TASK_A}parallelism: "two"\n`))).toContain('- parallelism: Invalid input: expected number, received string');
  });

  itWith('bwrap')('when a task has no paths', async () => {
    expect(await initFails(good('tasks:\n  - { id: a, title: a, paths: [] }\n'))).toMatch(/- tasks\[0\] \(id "a"\)\.paths: .*(>=1|at least)/);
  });

  itWith('bwrap')('when a task has an empty path, saying how to write one', async () => {
    expect(await initFails(good('tasks:\n  - { id: a, title: a, paths: [""] }\n'))).toContain(
      '- tasks[0] (id "a").paths[0]: pattern "" is empty; name a file ("src/add.js")',
    );
  });

  itWith('bwrap')("when a task's path climbs out of the tree", async () => {
    expect(await initFails(good('tasks:\n  - { id: a, title: a, paths: ["../outside.js"] }\n'))).toContain(
      '- tasks[0] (id "a").paths[0]: pattern "../outside.js" has a ".." segment',
    );
  });

  itWith('bwrap')('when dependencies form a cycle, naming it and how to break it', async () => {
    const tasks =
      'tasks:\n  - { id: a, title: a, paths: [a.js], dependsOn: [c] }\n  - { id: b, title: b, paths: [b.js], dependsOn: [a] }\n  - { id: c, title: c, paths: [c.js], dependsOn: [b] }\n';
    expect(await initFails(good(tasks))).toContain('- tasks: dependency cycle a -> c -> b -> a; remove one of these dependsOn entries');
  });

  itWith('bwrap')('when every path of a task is protected, naming the task and the fix', async () => {
    const tasks =
      'protected: ["test/**", world.yaml]\ntasks:\n  - { id: a, title: a, paths: [src/a.js] }\n  - { id: t, title: t, paths: ["test/t.test.js", "test/more/**/*.js"] }\n';
    const problem = await initFails(good(tasks), 'task-paths-protected');
    expect(problem).toContain('task "t" (paths: test/t.test.js, test/more/**/*.js) may change nothing: protected covers every path of it');
    expect(problem).toContain('give the task a path outside protected:');
  });

  itWith('bwrap')("when the script agent's recording is missing, naming the file and the fix", async () => {
    const source = await writeSource(fresh(), good(TASK_A).replace('script: recording.yaml', 'script: .genesis/recording.yaml'), {
      'recording.yaml': RECORDING,
    });
    const result = await genesis(['init', '--world', `${source}.world`, '--from', source]);
    const { problem } = expectOneClearError(result, 'recording-not-found');
    expect(problem).toContain(`agent.script names .genesis/recording.yaml, which ${source} does not have`);
    expect(problem).toContain('or fix agent.script in world.yaml');
    expect(existsSync(`${source}.world`)).toBe(false);
  });

  itWith('bwrap')('when --from names no directory, saying so rather than that it lacks a world.yaml', async () => {
    const missing = join(root, 'no-such-source');
    const result = await genesis(['init', '--world', `${missing}.world`, '--from', missing]);
    const { problem } = expectOneClearError(result, 'world-source-missing');
    expect(problem).toContain(`${missing} does not exist or is not a directory`);
    expect(problem).not.toContain('has no world.yaml');
  });

  itWith('bwrap')('when its .gitignore would leave world.yaml out of the world, naming the rule and the fix', async () => {
    // The allow-list some project templates use: ignore everything, then name what to keep.
    const source = await writeSource(fresh(), good(TASK_A), { 'recording.yaml': RECORDING, '.gitignore': '/*\n!/.gitignore\n!/recording.yaml\n' });
    const result = await genesis(['init', '--world', `${source}.world`, '--from', source]);
    const { problem } = expectOneClearError(result, 'manifest-ignored');
    expect(problem).toContain(`world.yaml would not be in the world: ${source}'s .gitignore ignores it (.gitignore:1:/*)`);
    expect(problem).toContain('add a line !/world.yaml');
    expect(existsSync(`${source}.world`)).toBe(false);
  });

  itWith('bwrap')('when its agent program does not exist, before any world is made', async () => {
    const yaml = good(TASK_A).replace(
      'agent: { kind: script, script: recording.yaml }',
      'agent: { kind: command, command: [genesis-agent-that-does-not-exist], sandbox: none }',
    );
    const source = await writeSource(fresh(), yaml);
    const result = await genesis(['init', '--world', `${source}.world`, '--from', source]);
    const { problem, hint } = expectOneClearError(result, 'agent-not-found');
    expect(problem).toContain('the agent command "genesis-agent-that-does-not-exist" was not found on PATH');
    expect(hint).toContain('agent.command in world.yaml');
    expect(existsSync(`${source}.world`)).toBe(false);
  });

  itWith('docker')('when its sandbox image is missing, saying how to build it', async () => {
    const problem = await initFails(good(TASK_A).replace('sandbox: bwrap', 'sandbox: docker'), 'sandbox-image-missing');
    expect(problem).toContain('The sandbox image genesis/no-such-image:0 does not exist.');
    // Not one of the images Genesis's script builds: pull or build it, or name another.
    expect(problem).toContain('docker pull genesis/no-such-image:0');
    expect(problem).not.toContain('build-images.sh');
  });
});

describe('genesis init with tasks whose paths overlap', () => {
  itWith('bwrap')('says which tasks overlap and that they will never run at the same time', async () => {
    const tasks = 'tasks:\n  - { id: a, title: a, paths: ["src/**"] }\n  - { id: b, title: b, paths: [src/b.js] }\n';
    const source = await writeSource(fresh(), good(tasks), { 'recording.yaml': RECORDING });
    const result = await genesis(['init', '--world', `${source}.world`, '--from', source]);
    // Overlap is legal (such tasks are serialised), but a user who did not mean it must be told.
    expect(`${result.stdout}${result.stderr}`).toMatch(/tasks "a" and "b" have overlapping paths; they will never run at the same time/);
  });
});

describe.concurrent('commands on a world refuse bad input with one clear error and leave the world as it was', () => {
  itWith('bwrap')('a world path that is a plain directory', async () => {
    const dir = fresh();
    await mkdir(dir);
    const { problem, hint } = expectOneClearError(await genesis(['run', '--world', dir]), 'world-not-a-repo');
    expect(problem).toContain(`${dir} is not a world (a bare git repository made by genesis init)`);
    // The hint prints the invocation that works here: `genesis` once linked, else the path to bin/genesis.js.
    expect(hint).toMatch(/(genesis|bin\/genesis\.js) init --world/);
    expect(await readdir(dir)).toEqual([]);
  });

  itWith('bwrap')('a world path that is an ordinary git checkout', async () => {
    const dir = fresh();
    await mkdir(dir);
    await git(['init', '--quiet', dir], { cwd: root });
    const before = await readdir(join(dir, '.git'));
    expectOneClearError(await genesis(['run', '--world', dir]), 'world-not-a-repo');
    expect(await readdir(join(dir, '.git'))).toEqual(before);
  });

  itWith('bwrap')('a world path that does not exist, creating nothing there', async () => {
    const dir = fresh();
    const { hint } = expectOneClearError(await genesis(['audit', '--world', dir]), 'world-not-found');
    expect(hint).toMatch(new RegExp(`(genesis|bin/genesis\\.js) init --world ${dir} --from`));
    expect(existsSync(dir)).toBe(false);
  });

  itWith('bwrap')('a Redis URL that does not answer, for a scheduler and for a worker', async () => {
    const before = await refsOf(world);
    const [run, worker] = await Promise.all([
      genesis(['run', '--world', world, '--redis', 'redis://127.0.0.1:1']),
      genesis(['worker', '--redis', 'redis://127.0.0.1:1']),
    ]);
    for (const result of [run, worker]) {
      const { problem, hint } = expectOneClearError(result, 'redis-unreachable');
      // Refused at the first try, not after a timeout: the refusal is the reason given.
      expect(problem).toContain('Redis at redis://127.0.0.1:1 does not answer (connect ECONNREFUSED 127.0.0.1:1)');
      expect(hint).toContain("`redis-server --port 1 --daemonize yes --save ''`");
      expect(hint).toContain('docker compose answers only inside its network');
    }
    expect(await refsOf(world)).toBe(before);
  });

  itWith('redis')("a Redis URL that does not answer, whose hint's command starts one the next command reaches", async () => {
    const port = await freePort();
    const url = `redis://127.0.0.1:${port}`;
    const { hint } = expectOneClearError(await genesis(['status', '--redis', url]), 'redis-unreachable');
    const command = /`(redis-server [^`]*)`/.exec(hint)?.[1];
    expect(command).toBe(`redis-server --port ${port} --daemonize yes --save ''`);
    execFileSync('bash', ['-c', command!], { cwd: root, stdio: 'ignore' });
    try {
      const status = await poll(
        () => genesis(['status', '--redis', url, '--json']),
        (r) => r.code === 0,
      );
      expect(JSON.parse(status.stdout)).toMatchObject({ workers: [] });
    } finally {
      execFileSync('redis-cli', ['-p', String(port), 'shutdown', 'nosave'], { stdio: 'ignore' });
    }
  });

  itWith('docker')('a sandbox image that is missing, before any episode starts', async () => {
    const before = await refsOf(world);
    const { problem } = expectOneClearError(await genesis(['run', '--world', world, '--sandbox', 'docker']), 'sandbox-image-missing');
    expect(problem).toContain('genesis/no-such-image:0');
    expect(await refsOf(world)).toBe(before);
    expect(before).not.toContain('refs/genesis/episodes/');
  });
});
