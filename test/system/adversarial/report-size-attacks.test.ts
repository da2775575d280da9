import { afterAll, beforeAll, describe, expect } from 'vitest';
import { stringify } from 'yaml';
import { itWith } from '../../helpers/services.js';
import { attackRoot, honestTask, runAttackedWorld, expectAuditHolds, type AttackedWorld } from './adversarial-world.js';

/**
 * Reports that would run the orchestrator out of memory: a step whose report glob matches twenty
 * files of 31 MiB each (each under the per-file limit), in three tasks whose gates run at once,
 * and a report of a few megabytes that holds more test cases than one gate may. Each gate must
 * fail `report-too-large` without reading what it refuses, the run must end on its own, and the
 * honest change beside them must land.
 */
const ATTACKS: Record<string, string> = {
  // Sparse: the sizes are what the gate sees, the disk holds none of it.
  'files-1': 'mkdir -p reports; for i in $(seq 20); do truncate -s 31M reports/r$i.xml; done\n',
  'files-2': 'mkdir -p reports; for i in $(seq 20); do truncate -s 31M reports/r$i.xml; done\n',
  'files-3': 'mkdir -p reports; for i in $(seq 20); do truncate -s 31M reports/r$i.xml; done\n',
  cases:
    "mkdir -p reports; node -e \"require('fs').writeFileSync('reports/junit.xml', '<testsuites><testsuite name=\\\"s\\\">' + '<testcase name=\\\"c\\\"/>'.repeat(1100000) + '</testsuite></testsuites>')\"\n",
};

let w: AttackedWorld;

beforeAll(async () => {
  const { root } = await attackRoot();
  const honest = honestTask('honest');
  const ids = Object.keys(ATTACKS);
  const manifest = {
    name: 'report-size-attacks',
    goal: { outcome: 'the honest module exists' },
    verify: {
      sandbox: 'bwrap',
      timeoutSec: 60,
      test: 'mkdir -p reports && node --test --test-reporter=junit --test-reporter-destination=reports/junit.xml test/base.test.js',
      report: { junit: 'reports/*.xml' },
    },
    protected: ['test/**', 'world.yaml', '.genesis/**'],
    agent: { kind: 'script', script: '.genesis/recording.yaml', timeoutSec: 10 },
    retry: { maxAttempts: 1 },
    parallelism: 4,
    tasks: [
      { ...honest.task, check: 'mkdir -p reports && node --test --test-reporter=junit --test-reporter-destination=reports/junit.xml test/honest.test.js' },
      ...ids.map((id) => ({ id, title: id, paths: [`src/${id}.sh`], check: `sh src/${id}.sh` })),
    ],
  };
  const recording = {
    tasks: {
      honest: [{ write: { 'src/honest.js': "export const v = 'honest';\n" } }],
      ...Object.fromEntries(ids.map((id) => [id, [{ write: { [`src/${id}.sh`]: ATTACKS[id] } }]])),
    },
  };
  w = await runAttackedWorld({ root, manifest, files: { ...honest.files, '.genesis/recording.yaml': stringify(recording) }, sandbox: 'bwrap' });
}, 300_000);
afterAll(() => w?.dispose());

describe('reports sized to run the orchestrator out of memory', () => {
  itWith('bwrap')('fail their gates report-too-large, by bytes or by test cases, and the run ends on its own', () => {
    for (const id of ['files-1', 'files-2', 'files-3']) {
      const e = w.episodeOf(id);
      expect(e, `${id}: ${e.reason}: ${e.message}`).toMatchObject({ outcome: 'rejected', reason: 'report-too-large' });
      expect(e.message).toMatch(/20 report file\(s\) .* over the \d+-byte limit of one step/);
    }
    const cases = w.episodeOf('cases');
    expect(cases, `${cases.reason}: ${cases.message}`).toMatchObject({ outcome: 'rejected', reason: 'report-too-large' });
    expect(cases.message).toMatch(/over the 1000000 of one gate's reports together/);
  });

  itWith('bwrap')('lands only the honest change, and audit holds', async () => {
    const honest = w.episodeOf('honest');
    expect(honest, `${honest.reason}: ${honest.message}`).toMatchObject({ outcome: 'accepted' });
    expect(w.history.map((c) => c.task)).toEqual(['honest', null]);
    await expectAuditHolds(w.world);
  });
});
