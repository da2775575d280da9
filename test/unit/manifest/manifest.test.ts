import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { GenesisError, isGenesisError } from '../../../src/errors/genesis-error.js';
import { parseManifest, readManifest, type ManifestParseResult } from '../../../src/manifest/parse.js';
import { manifestSchema, taskSchema } from '../../../src/manifest/schema.js';

type Doc = Record<string, unknown>;

/** The smallest manifest the schema accepts, as the user would write it. */
function minimal(overrides: Doc = {}): Doc {
  return {
    name: 'calc',
    goal: { outcome: 'a calculator' },
    verify: { test: 'node --test' },
    agent: { kind: 'command', command: ['bash', 'agent.sh'] },
    ...overrides,
  };
}

function task(id: string, paths: string[], more: Doc = {}): Doc {
  return { id, title: `task ${id}`, paths, ...more };
}

function parse(doc: Doc): ManifestParseResult {
  return parseManifest(stringify(doc));
}

/** Asserts the manifest is refused with exactly one error and returns it. */
function onlyError(result: ManifestParseResult): string {
  expect(result.manifest).toBeNull();
  expect(result.errors).toHaveLength(1);
  return result.errors[0]!;
}

/** What every agent block holds once parsed, besides its kind and its command or script. */
const AGENT_DEFAULTS = {
  timeoutSec: 1800,
  env: [],
  maxTurns: 50,
  requestTimeoutSec: 300,
  stallSec: 120,
  commandTimeoutSec: 300,
  commandOutputKb: 32,
  sandbox: 'auto',
  network: 'genesis-agents',
  rotation: [],
  race: 1,
  limits: {},
  homeFiles: [],
};

describe('parseManifest', () => {
  describe('when the manifest is valid', () => {
    it('fills every default of a minimal manifest', () => {
      const result = parse(minimal());
      expect(result.errors).toEqual([]);
      expect(result.warnings).toEqual([]);
      expect(result.manifest).toEqual({
        name: 'calc',
        branch: 'main',
        goal: { outcome: 'a calculator', constraints: [], stop: {} },
        verify: {
          sandbox: 'auto',
          image: 'genesis/node:20',
          setup: '',
          build: '',
          test: 'node --test',
          timeoutSec: 600,
          limits: { cpus: 1, memoryMb: 2048, pids: 256 },
          mode: 'all-pass',
          maxFileKb: 1024,
          maxChangeKb: 10240,
          maxFiles: 500,
        },
        protected: ['world.yaml'],
        agent: {
          kind: 'command',
          command: ['bash', 'agent.sh'],
          ...AGENT_DEFAULTS,
        },
        retry: { maxAttempts: 3, blockOnRepeat: true },
        parallelism: 2,
        race: { stopOnWin: true },
        review: 'tasks',
        tasks: [],
        ledger: { keepRejectedDays: 14 },
        notify: { webhooks: [] },
      });
    });

    it("fills every default of a task and keeps the user's values", () => {
      const result = parse(
        minimal({
          tasks: [task('add', ['src/add.js']), task('cli', ['bin/**'], { dependsOn: ['add'], check: 'node --test test/cli.test.js', humanMinutes: 10 })],
        }),
      );
      expect(result.errors).toEqual([]);
      expect(result.manifest!.tasks).toEqual([
        { id: 'add', title: 'task add', description: '', acceptance: '', paths: ['src/add.js'], dependsOn: [], witness: false, review: false, kind: 'build' },
        {
          id: 'cli',
          title: 'task cli',
          description: '',
          acceptance: '',
          paths: ['bin/**'],
          dependsOn: ['add'],
          check: 'node --test test/cli.test.js',
          humanMinutes: 10,
          witness: false,
          review: false,
          kind: 'build',
        },
      ]);
    });

    it('fills the limits left out of a partial limits block', () => {
      const result = parse(minimal({ verify: { test: 'npm test', limits: { memoryMb: 512 } } }));
      expect(result.manifest!.verify.limits).toEqual({ cpus: 1, memoryMb: 512, pids: 256 });
    });

    it('accepts a script agent with its recording', () => {
      const result = parse(minimal({ agent: { kind: 'script', script: '.genesis/recording.yaml' } }));
      expect(result.errors).toEqual([]);
      expect(result.manifest!.agent).toEqual({
        kind: 'script',
        script: '.genesis/recording.yaml',
        ...AGENT_DEFAULTS,
      });
    });

    it('accepts the calc example world written the way the README shows it', () => {
      const text = [
        'name: calc',
        'branch: main',
        'goal:',
        '  outcome: >',
        '    A calculator.',
        '  evidence: "node --test test/"',
        '  constraints: ["Plain JavaScript"]',
        '  stop: { maxEpisodes: 40, maxHours: 2 }',
        'verify:',
        '  sandbox: bwrap',
        '  setup: "npm ci --offline"',
        '  test: "node --test test/world.test.js"',
        '  limits: { cpus: 1, memoryMb: 512, pids: 128 }',
        'protected: ["test/**", "world.yaml"]',
        'agent:',
        '  kind: script',
        '  script: .genesis/recording.yaml',
        'retry: { maxAttempts: 2 }',
        'parallelism: 4',
        'tasks:',
        '  - id: add',
        '    title: "add(a, b)"',
        '    paths: ["src/arith.js"]',
        '  - id: evaluate',
        '    title: "evaluate(text)"',
        '    paths: ["src/evaluate.js"]',
        '    dependsOn: [add]',
      ].join('\n');
      const result = parseManifest(text);
      expect(result.errors).toEqual([]);
      expect(result.manifest).toMatchObject({
        goal: { outcome: 'A calculator.', evidence: 'node --test test/', constraints: ['Plain JavaScript'], stop: { maxEpisodes: 40, maxHours: 2 } },
        verify: { sandbox: 'bwrap', setup: 'npm ci --offline', limits: { cpus: 1, memoryMb: 512, pids: 128 } },
        retry: { maxAttempts: 2 },
        parallelism: 4,
      });
      expect(result.manifest!.tasks.map((t) => t.id)).toEqual(['add', 'evaluate']);
    });
  });

  describe('when the text is not YAML', () => {
    it('says so with the line of the problem', () => {
      const error = onlyError(parseManifest('name: calc\ngoal:\n  outcome: x\ntasks: [\n  a: b\n'));
      expect(error).toMatch(/^world\.yaml is not valid YAML \(line \d+\): /);
      expect(error).not.toContain('\n');
    });

    it('refuses a key given twice, naming its line', () => {
      const text = `${stringify(minimal())}parallelism: 2\nparallelism: 3\n`;
      const lines = text.split('\n');
      const error = onlyError(parseManifest(text));
      expect(error).toContain(`(line ${lines.indexOf('parallelism: 3') + 1})`);
      expect(error).toMatch(/unique/);
    });

    it('refuses a document that is a list, not a mapping', () => {
      const error = onlyError(parseManifest('- a\n- b\n'));
      expect(error).toBe('(top level): Invalid input: expected object, received array');
    });

    it('names every required field of an empty file', () => {
      const result = parseManifest('');
      expect(result.manifest).toBeNull();
      expect(result.errors.map((e) => e.split(':')[0])).toEqual(['name', 'goal', 'verify', 'agent']);
    });
  });

  describe('when a field is unknown', () => {
    it('names an unknown top-level field and says to remove it', () => {
      const error = onlyError(parse(minimal({ colour: 'red' })));
      expect(error).toBe('colour: unknown field; remove it or check its spelling');
    });

    it('names the object holding a misspelled nested field, and the field', () => {
      const error = onlyError(parse(minimal({ verify: { test: 'node --test', tset: 'npm test' } })));
      expect(error).toBe('verify.tset: unknown field; remove it or check its spelling');
    });

    it('names each unknown field of one object with its own path', () => {
      const { errors } = parse(minimal({ verify: { test: 'node --test', tset: 'x', biuld: 'y' } }));
      expect(errors).toEqual(['verify.tset: unknown field; remove it or check its spelling', 'verify.biuld: unknown field; remove it or check its spelling']);
    });

    it('names a misspelled task field with the index and the id of the task', () => {
      const error = onlyError(parse(minimal({ tasks: [task('a', ['a'], { depends: ['b'] })] })));
      expect(error).toBe('tasks[0] (id "a").depends: unknown field; remove it or check its spelling');
    });

    it('refuses an unknown field inside verify.limits', () => {
      const error = onlyError(parse(minimal({ verify: { test: 'x', limits: { disk: 3 } } })));
      expect(error).toBe('verify.limits.disk: unknown field; remove it or check its spelling');
    });
  });

  describe('when a field has the wrong type or value', () => {
    it('refuses parallelism written as a word', () => {
      expect(onlyError(parse(minimal({ parallelism: 'two' })))).toBe('parallelism: Invalid input: expected number, received string');
    });

    it('refuses a fractional parallelism', () => {
      expect(onlyError(parse(minimal({ parallelism: 1.5 })))).toMatch(/^parallelism: .*expected int/);
    });

    it('refuses a parallelism of zero', () => {
      expect(onlyError(parse(minimal({ parallelism: 0 })))).toMatch(/^parallelism: .*>=1/);
    });

    it('refuses zero attempts per task', () => {
      expect(onlyError(parse(minimal({ retry: { maxAttempts: 0 } })))).toMatch(/^retry\.maxAttempts: .*>=1/);
    });

    it('refuses an unknown sandbox and lists the choices', () => {
      const error = onlyError(parse(minimal({ verify: { test: 'x', sandbox: 'vm' } })));
      expect(error).toMatch(/^verify\.sandbox: /);
      for (const choice of ['auto', 'docker', 'bwrap', 'none']) expect(error).toContain(`"${choice}"`);
    });

    it('refuses an unknown agent kind and lists the choices', () => {
      const error = onlyError(parse(minimal({ agent: { kind: 'robot' } })));
      expect(error).toMatch(/^agent\.kind: Invalid option: expected one of /);
      for (const choice of ['command', 'script']) expect(error).toContain(`"${choice}"`);
    });

    it('refuses a world name with a space', () => {
      expect(onlyError(parse(minimal({ name: 'my world' })))).toBe('name: use letters, digits, ".", "_" and "-"');
    });

    it('names each limit that is out of range', () => {
      const result = parse(minimal({ verify: { test: 'x', limits: { cpus: 0, memoryMb: 10, pids: 2 } } }));
      expect(result.manifest).toBeNull();
      expect(result.errors.map((e) => e.split(':')[0])).toEqual(['verify.limits.cpus', 'verify.limits.memoryMb', 'verify.limits.pids']);
    });

    it('refuses an empty agent command', () => {
      expect(onlyError(parse(minimal({ agent: { kind: 'command', command: [] } })))).toMatch(/^agent\.command: .*>=1 items/);
    });
  });

  describe('when a required field is missing', () => {
    it('names verify.test and says it is missing, a string', () => {
      const error = onlyError(parse(minimal({ verify: { image: 'genesis/node:20' } })));
      expect(error).toBe('verify.test: missing; it is required (string)');
    });

    it('refuses an empty verify.test', () => {
      expect(onlyError(parse(minimal({ verify: { test: '' } })))).toMatch(/^verify\.test: /);
    });

    it('refuses a verify.test that is only whitespace, which would verify nothing', () => {
      expect(onlyError(parse(minimal({ verify: { test: '   ' } })))).toMatch(/^verify\.test: /);
    });

    it('names goal.outcome and says it is missing, a string', () => {
      const error = onlyError(parse(minimal({ goal: { evidence: 'npm test' } })));
      expect(error).toBe('goal.outcome: missing; it is required (string)');
      expect(error).not.toContain('undefined');
    });

    it('refuses an empty branch name', () => {
      expect(onlyError(parse(minimal({ branch: '' })))).toMatch(/^branch: /);
    });

    it('names a task without a title', () => {
      expect(onlyError(parse(minimal({ tasks: [{ id: 'a', paths: ['a'] }] })))).toBe('tasks[0] (id "a").title: missing; it is required (string)');
    });

    it('requires the command of a command agent and shows an example', () => {
      const error = onlyError(parse(minimal({ agent: { kind: 'command' } })));
      expect(error).toBe('agent.command: required when agent.kind is "command" (an argv list, e.g. ["bash", "agent.sh"])');
    });

    it('requires the recording of a script agent', () => {
      const error = onlyError(parse(minimal({ agent: { kind: 'script' } })));
      expect(error).toBe('agent.script: required when agent.kind is "script" (the path of a recording in the world)');
    });
  });

  describe('when tasks are inconsistent', () => {
    it('refuses a task id used twice, naming the later task', () => {
      const error = onlyError(parse(minimal({ tasks: [task('add', ['a']), task('sub', ['b']), task('add', ['c'])] })));
      expect(error).toBe('tasks[2] (id "add").id: "add" is used by an earlier task; task ids must be unique');
    });

    it('refuses a task id with capitals and says which characters are allowed', () => {
      const error = onlyError(parse(minimal({ tasks: [task('Add', ['a'])] })));
      expect(error).toBe('tasks[0] (id "Add").id: use lowercase letters, digits, ".", "_" and "-", starting with a letter or digit');
    });

    it('refuses a task id starting with a dash', () => {
      expect(onlyError(parse(minimal({ tasks: [task('-x', ['a'])] })))).toMatch(/^tasks\[0\] \(id "-x"\)\.id: /);
    });

    it('refuses a dependency on a task that does not exist', () => {
      const error = onlyError(parse(minimal({ tasks: [task('a', ['a']), task('b', ['b'], { dependsOn: ['a', 'zz'] })] })));
      expect(error).toBe('tasks[1] (id "b").dependsOn[1]: no task has id "zz"');
    });

    it('reports a task depending on itself once, as a self-dependency', () => {
      const error = onlyError(parse(minimal({ tasks: [task('a', ['a'], { dependsOn: ['a'] })] })));
      expect(error).toBe('tasks[0] (id "a").dependsOn[0]: a task cannot depend on itself');
    });

    it('refuses a dependency cycle and shows the cycle', () => {
      const error = onlyError(
        parse(
          minimal({
            tasks: [
              task('x', ['x']),
              task('a', ['a'], { dependsOn: ['c'] }),
              task('b', ['b'], { dependsOn: ['a'] }),
              task('c', ['c'], { dependsOn: ['b', 'x'] }),
            ],
          }),
        ),
      );
      expect(error).toBe('tasks: dependency cycle a -> c -> b -> a; remove one of these dependsOn entries');
    });

    it('accepts a diamond of dependencies, which is not a cycle', () => {
      const result = parse(
        minimal({
          tasks: [
            task('a', ['a']),
            task('b', ['b'], { dependsOn: ['a'] }),
            task('c', ['c'], { dependsOn: ['a'] }),
            task('d', ['d'], { dependsOn: ['b', 'c'] }),
          ],
        }),
      );
      expect(result.errors).toEqual([]);
    });

    it('refuses a task with no paths', () => {
      expect(onlyError(parse(minimal({ tasks: [task('a', [])] })))).toBe(
        'tasks[0] (id "a").paths: a task needs at least one path it may change, e.g. ["src/add.js"]',
      );
    });
  });

  describe('when a path is unsafe', () => {
    const cases: Array<[string, string, RegExp]> = [
      ['an empty path', '', /is empty/],
      ['a path that is only "./"', './', /is empty/],
      ['an absolute path', '/etc/passwd', /is absolute; write it relative to the world's root/],
      ['a Windows drive path', 'C:/src', /is absolute/],
      ['a path climbing out with ".."', 'src/../../x', /has a "\.\." segment; a pattern must stay inside the world's tree/],
      ['a path into .git', '.git/hooks', /names git's own directory \(\.git\)/],
      ['a path into .GIT spelt in capitals', 'src/.GIT', /names git's own directory/],
      ['a negation', '!src', /negation/],
      ['a backslash path', 'src\\add.js', /backslash/],
    ];
    for (const [what, pattern, message] of cases) {
      it(`refuses ${what} in a task's paths, naming the path`, () => {
        const error = onlyError(parse(minimal({ tasks: [task('a', ['ok.js', pattern])] })));
        expect(error.startsWith(`tasks[0] (id "a").paths[1]: pattern ${JSON.stringify(pattern)} `)).toBe(true);
        expect(error).toMatch(message);
      });
    }

    it('refuses unsafe protected paths, naming each one', () => {
      const result = parse(minimal({ protected: ['test/**', '../x', ''] }));
      expect(result.manifest).toBeNull();
      expect(result.errors).toEqual([
        'protected[1]: pattern "../x" has a ".." segment; a pattern must stay inside the world\'s tree',
        'protected[2]: pattern "" is empty; name a file ("src/add.js"), a directory ("src") or a glob ("src/**")',
      ]);
    });
  });

  describe('when task paths overlap', () => {
    it('warns about each overlapping pair and still accepts the manifest', () => {
      const result = parse(minimal({ tasks: [task('a', ['src']), task('b', ['src/add.js']), task('c', ['lib/**']), task('d', ['lib/x.js'])] }));
      expect(result.errors).toEqual([]);
      expect(result.manifest).not.toBeNull();
      expect(result.warnings).toEqual([
        'tasks "a" and "b" have overlapping paths; they will never run at the same time',
        'tasks "c" and "d" have overlapping paths; they will never run at the same time',
      ]);
    });

    it('does not warn about tasks that dependsOn orders, directly or through another task', () => {
      const chain = [task('a', ['src']), task('b', ['src/add.js'], { dependsOn: ['a'] }), task('c', ['src/sub.js'], { dependsOn: ['b'] })];
      expect(parse(minimal({ tasks: chain })).warnings).toEqual([]);
      const siblings = [task('a', ['lib']), task('b', ['src/x.js'], { dependsOn: ['a'] }), task('c', ['src'], { dependsOn: ['a'] })];
      expect(parse(minimal({ tasks: siblings })).warnings).toEqual(['tasks "b" and "c" have overlapping paths; they will never run at the same time']);
    });

    it('does not warn about disjoint paths', () => {
      expect(parse(minimal({ tasks: [task('a', ['src/a.js']), task('b', ['src/b.js'])] })).warnings).toEqual([]);
    });
  });

  it('reports every problem of a manifest at once', () => {
    const result = parse(minimal({ agent: { kind: 'command' }, tasks: [task('a', ['/abs']), task('a', ['b'])] }));
    expect(result.manifest).toBeNull();
    expect(result.errors.map((e) => e.split(':')[0])).toEqual(['agent.command', 'tasks[1] (id "a").id', 'tasks[0] (id "a").paths[0]']);
  });
});

describe('readManifest', () => {
  it('returns the complete manifest of a valid file', () => {
    expect(readManifest(stringify(minimal())).parallelism).toBe(2);
  });

  it('throws a manifest-invalid GenesisError listing every problem and saying what to do', () => {
    let caught: unknown;
    try {
      readManifest(stringify(minimal({ parallelism: 'two', colour: 'red' })));
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(GenesisError);
    expect(isGenesisError(caught)).toBe(true);
    const error = caught as GenesisError;
    expect(error.code).toBe('manifest-invalid');
    expect(error.retryable).toBe(false);
    expect(error.message).toBe(
      [
        'Found issues in world.yaml:',
        '  - parallelism: Invalid input: expected number, received string',
        '  - colour: unknown field; remove it or check its spelling',
      ].join('\n'),
    );
    expect(error.hint).toContain('docs/reference/world-yaml.md');
  });

  it('names the source it was given', () => {
    expect(() => readManifest('- a', 'worlds/calc/world.yaml')).toThrow(/^Found issues in worlds\/calc\/world\.yaml:\n {2}- /);
  });

  it('throws for text that is not YAML', () => {
    expect(() => readManifest('a: [')).toThrow(
      expect.objectContaining({ code: 'manifest-invalid', message: expect.stringMatching(/not valid YAML \(line \d+\)/) }),
    );
  });
});

describe('manifestSchema', () => {
  it('describes every task field so the reference and errors can show it', () => {
    const shape = taskSchema.shape;
    for (const key of ['title', 'description', 'acceptance', 'paths', 'dependsOn', 'check', 'humanMinutes'] as const) {
      expect(shape[key].description, key).toBeTruthy();
    }
  });

  it('is strict at the top level', () => {
    expect(manifestSchema.safeParse({ ...minimal(), extra: 1 }).success).toBe(false);
  });
});
