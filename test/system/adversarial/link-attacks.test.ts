import { chmod, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { auditWorld } from '../../../src/audit/index.js';
import { git } from '../../../src/git/git.js';
import { itWith } from '../../helpers/services.js';
import { attackRoot, honestTask, runAttackedWorld, type AttackedWorld } from './adversarial-world.js';

/**
 * Paths a candidate or an install shaped, followed by Genesis on the host as root. Agents (shell
 * scripts in the bwrap agent sandbox) change what a dependency install or a build step runs, so
 * that an output of the set, or a directory the gate's report clean-up reaches, is a link out of
 * the tree: to the host's root, to an absolute path, or climbing with `..` behind another link.
 * Nothing they point at may be bound, read or removed; the honest task beside them lands.
 */
const SECRET = 'HOST-SECRET-3b9d';

const DEPS_ATTACKS: Record<string, string> = {
  // The output itself a relative link climbing to /.
  'deps-output': 'rm -rf node_modules; ln -s ../../../../../../../../../../.. node_modules',
  // A link inside the output, to / and to an absolute host path.
  'deps-inner': 'ln -s ../../../../../../../../../../.. node_modules/root',
  'deps-absolute': 'ln -s / node_modules/abs',
  // A `..` behind a link that is itself inside: lexically in, physically out.
  'deps-behind': 'mkdir -p node_modules/a; ln -s .. node_modules/a/up; ln -s up/../../../../../../../.. node_modules/a/out',
  // Deep inside a package.
  'deps-deep': 'mkdir -p node_modules/pkg/lib; ln -s ../../../../../../../../../../../etc node_modules/pkg/lib/etc',
};

const depsAgent = `#!/bin/sh
case "$GENESIS_TASK_ID" in
honest) mkdir -p src; printf "export const v = 'honest';\\n" > src/honest.js ;;
${Object.entries(DEPS_ATTACKS)
  .map(([id, line]) => `${id}) printf '%s\\n' '${line}' > deps/${id}.sh ;;`)
  .join('\n')}
esac
`;

describe('a dependency install that leaves links out of the set', () => {
  let w: AttackedWorld;
  let cacheDir: string;
  const cacheBefore = process.env.GENESIS_CACHE_DIR;
  beforeAll(async () => {
    const dirs = await attackRoot();
    cacheDir = join(dirs.root, 'cache');
    process.env.GENESIS_CACHE_DIR = cacheDir;
    await writeFile(join(dirs.root, 'host-secret.txt'), `${SECRET}\n`);
    const honest = honestTask('honest');
    const manifest = {
      name: 'deps-link-attacks',
      goal: { outcome: 'the honest module exists' },
      verify: {
        sandbox: 'bwrap',
        deps: {
          files: Object.keys(DEPS_ATTACKS).map((id) => `deps/${id}.sh`),
          install: 'mkdir -p node_modules/ok && for f in deps/*.sh; do sh "$f" || exit 1; done',
          paths: ['node_modules'],
          timeoutSec: 60,
        },
        test: 'node --test test/base.test.js',
        timeoutSec: 60,
      },
      protected: ['test/**', 'world.yaml', '.genesis/**'],
      agent: { kind: 'command', preset: 'claude-code', command: ['sh', '.genesis/agent.sh'], timeoutSec: 30, sandbox: 'bwrap' },
      retry: { maxAttempts: 1 },
      parallelism: 3,
      tasks: [
        honest.task,
        ...Object.keys(DEPS_ATTACKS).map((id) => ({
          id,
          title: id,
          paths: [`deps/${id}.sh`],
          // Would print the host's file if the set were bound with its link.
          check: `grep -rs ${SECRET.slice(0, 6)} node_modules/ -r; find -L node_modules -maxdepth 14 -name host-secret.txt -exec cat {} + ; exit 1`,
        })),
      ],
    };
    const files: Record<string, string> = { ...honest.files, '.gitignore': 'node_modules\n', '.genesis/agent.sh': depsAgent };
    for (const id of Object.keys(DEPS_ATTACKS)) files[`deps/${id}.sh`] = 'true\n';
    w = await runAttackedWorld({ root: dirs.root, manifest, files, sandbox: 'bwrap' });
  }, 300_000);
  afterAll(async () => {
    if (cacheBefore === undefined) delete process.env.GENESIS_CACHE_DIR;
    else process.env.GENESIS_CACHE_DIR = cacheBefore;
    await w?.dispose();
  });

  itWith('bwrap')('fails each such install as deps-failed naming the link, and stores no set holding one', async () => {
    for (const id of Object.keys(DEPS_ATTACKS)) {
      const e = w.episodeOf(id);
      expect(e, id).toMatchObject({ outcome: 'rejected', reason: 'deps-failed' });
      expect(e.message, id).toMatch(/output "node_modules[^"]*" is a symlink/);
    }
    const sets = await readdir(join(cacheDir, 'deps', 'sets'));
    // The base's own set (node_modules/ok) is stored: the check is not vacuous.
    expect(sets.length).toBeGreaterThan(0);
    for (const key of sets) expect(await findLinks(join(cacheDir, 'deps', 'sets', key, 'out')), key).toEqual([]);
  });

  itWith('bwrap')('lands the honest change, leaks the host file nowhere, and leaves a head audit passes', async () => {
    expect(w.history.filter((c) => c.parents.length > 0).map((c) => c.task)).toEqual(['honest']);
    const everyObject = (await git(['cat-file', '--batch-all-objects', '--batch'], { cwd: w.world.path })).stdout;
    expect(everyObject).not.toContain(SECRET);
    const report = await auditWorld({ world: w.world, sample: 0 });
    expect(report.findings.filter((f) => f.severity === 'violation')).toEqual([]);
  });
});

/** Every symbolic link under a directory of the cache, not following any. */
async function findLinks(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isSymbolicLink()) found.push(join(entry.parentPath, entry.name));
  }
  return found;
}

describe('a build step that makes the report directory a link to the host', () => {
  let w: AttackedWorld;
  let victims: string;
  beforeAll(async () => {
    const dirs = await attackRoot();
    victims = join(dirs.root, 'victims');
    await mkdir(join(victims, 'deep'), { recursive: true });
    for (const name of ['junit.xml', 'a.xml', 'deep/x.xml']) await writeFile(join(victims, name), 'root-owned host file\n');
    await chmod(victims, 0o755);
    const honest = honestTask('honest');
    const agent = `#!/bin/sh
case "$GENESIS_TASK_ID" in
honest) mkdir -p src; printf "export const v = 'honest';\\n" > src/honest.js ;;
reports-link) printf 'ln -s %s reports\\nmkdir -p nested && ln -s %s nested/reports\\nln -s %s/deep nested/deep\\n' '${victims}' '${victims}' '${victims}' > build/build.sh ;;
reports-parent) printf 'mkdir -p out && ln -s %s out/r\\n' '${victims}/..' > build/build.sh ;;
esac
`;
    const manifest = {
      name: 'report-link-attacks',
      goal: { outcome: 'the honest module exists' },
      verify: {
        sandbox: 'bwrap',
        build: 'sh build/build.sh',
        test: 'mkdir -p r && node --test --test-reporter=junit --test-reporter-destination=r/junit.xml test/base.test.js',
        report: { junit: ['r/junit.xml', 'reports/junit.xml', 'reports/*.xml', 'nested/reports/a.xml', 'nested/deep/**/*.xml', 'out/r/victims/junit.xml'] },
        timeoutSec: 60,
      },
      protected: ['test/**', 'world.yaml', '.genesis/**'],
      agent: { kind: 'command', preset: 'claude-code', command: ['sh', '.genesis/agent.sh'], timeoutSec: 30, sandbox: 'bwrap' },
      retry: { maxAttempts: 1 },
      parallelism: 2,
      tasks: [
        { ...honest.task, check: 'mkdir -p r && node --test --test-reporter=junit --test-reporter-destination=r/junit.xml test/honest.test.js' },
        ...['reports-link', 'reports-parent'].map((id) => ({ id, title: id, paths: ['build/build.sh'] })),
      ],
    };
    const files = { ...honest.files, 'build/build.sh': 'true\n', '.genesis/agent.sh': agent };
    w = await runAttackedWorld({ root: dirs.root, manifest, files, sandbox: 'bwrap' });
  }, 300_000);
  afterAll(() => w?.dispose());

  itWith('bwrap')('removes no host file through the link and reads none as a report', async () => {
    for (const name of ['junit.xml', 'a.xml', 'deep/x.xml']) expect(await readFile(join(victims, name), 'utf8'), name).toBe('root-owned host file\n');
    expect((await stat(victims)).isDirectory()).toBe(true);
    for (const id of ['reports-link', 'reports-parent']) {
      const e = w.episodeOf(id);
      expect(e, id).toMatchObject({
        outcome: 'rejected',
        reason: 'report-invalid',
        message: expect.stringContaining('outside the work dir (through a symbolic link)'),
      });
      expect((await w.artifactsOf(id)).gateLog ?? '', id).not.toContain('removed before the run');
    }
    expect(w.episodeOf('honest'), JSON.stringify(w.episodes.map((e) => [e.task, e.reason, e.message]))).toMatchObject({ outcome: 'accepted' });
    const report = await auditWorld({ world: w.world, sample: 0 });
    expect(report.findings.filter((f) => f.severity === 'violation')).toEqual([]);
  });
});
