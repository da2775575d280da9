import { execFileSync } from 'node:child_process';
import { sharedWarmPool } from '../../../src/sandbox/warm/pool.js';
import { afterAll, describe, expect } from 'vitest';
import { runEmbedded } from '../../../src/compose/embedded-run.js';
import { readAcceptedHistory } from '../../../src/world/history/accepted-history.js';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { itWith } from '../../helpers/services.js';
import { baseManifest, GOOD_A, GOOD_B, makeWorld } from '../../helpers/world-fixture.js';
import { auditCli } from './audited-world.js';

// An image of this test's own, so removing it touches no other test: genesis/node:20 plus a label.
const IMAGE = `genesis/fleet-audit-${process.pid}:1`;
const docker = (args: string[], input?: string) => execFileSync('docker', args, { encoding: 'utf8', input, stdio: ['pipe', 'pipe', 'ignore'] }).trim();
const buildImage = (mark: string): string => {
  docker(['build', '--quiet', '--label', `genesis.test-mark=${mark}`, '-t', IMAGE, '-'], 'FROM genesis/node:20\n');
  return docker(['image', 'inspect', '--format', '{{.Id}}', IMAGE]);
};

afterAll(() => {
  execFileSync('docker', ['rmi', '--force', IMAGE], { stdio: 'ignore' });
});

describe('the image that judged a change', () => {
  itWith('docker')(
    'is recorded by id in the ledger and the trailer, and an audit judges again in it, or says it is gone',
    async () => {
      const first = buildImage(`one-${Date.now()}`);
      const f = await makeWorld({
        sandbox: 'docker',
        manifest: baseManifest({
          verify: { sandbox: 'docker', image: IMAGE, test: 'node --test test/base.test.js', timeoutSec: 60, limits: { cpus: 1, memoryMb: 256, pids: 64 } },
        }),
        recording: { a: [{ write: { 'src/a.js': GOOD_A } }], b: [{ write: { 'src/b.js': GOOD_B } }] },
      });
      await runEmbedded({ world: f.world, sandbox: f.sandbox });

      const history = await readAcceptedHistory(f.world.path, 'main');
      expect(history).toHaveLength(3);
      const records = await new GitLedger(f.world.path).readAll();
      // A change gated on its place in the integration queue has a trailer written before its gate ran:
      // it names the verification, whose record holds the summary with the image.
      const verdictOf = (c: (typeof history)[number]) =>
        c.verified?.includes('its record holds the verdict') ? records.find((r) => r.id === c.verification)?.gate?.summary : c.verified;
      for (const c of history) expect(verdictOf(c)).toContain(`docker ${IMAGE}@${first}: `);
      expect(records.filter((r) => r.outcome === 'accepted').map((r) => r.gate?.image)).toEqual([
        { name: IMAGE, id: first },
        { name: IMAGE, id: first },
      ]);

      const same = await auditCli(f.world.path);
      expect(same.report.findings).toEqual([]);
      expect(same.report.reverified).toMatchObject({ commits: 3, sandbox: 'docker', images: [first] });
      expect(same.code).toBe(0);

      // The name now points at other content and the image that judged is gone from this host.
      const second = buildImage(`two-${Date.now()}`);
      expect(second).not.toBe(first);
      // Warm gate containers made from it would keep it in use: the pool gives them back first.
      await sharedWarmPool()?.drain();
      docker(['rmi', first]);
      const gone = await auditCli(f.world.path);
      expect(gone.report.findings.map((x) => [x.severity, x.code])).toEqual([['warning', 'image-missing']]);
      expect(gone.report.findings[0]!.message).toContain(`3 commits`);
      expect(gone.report.findings[0]!.message).toContain(`judged in image ${first}, which this host does not have`);
      expect(gone.report.reverified.images).toEqual([second]);
      expect(gone.code).toBe(0);
    },
    180_000,
  );
});
