import { access } from 'node:fs/promises';
import { describe, expect } from 'vitest';
import { genesis } from '../../helpers/genesis-cli.js';
import { itWith } from '../../helpers/services.js';
import { tempDir } from '../../helpers/temp-dir.js';

/**
 * A worker on a machine (or pod) where nothing can confine its gates or agents: with
 * --refuse-unconfined, as deploy/kubernetes runs it, it exits with worker-unconfined before it
 * joins the queue, so no job is taken and run or refused there. The machine is made so by a PATH
 * with no bubblewrap or setpriv on it and a Docker host that does not exist.
 */
describe('genesis worker --refuse-unconfined', () => {
  itWith('redis')(
    'exits with worker-unconfined, takes no job, and says what to do where no sandbox works',
    async () => {
      const health = `${await tempDir('genesis-unconfined-')}/health`;
      const result = await genesis(['worker', '--refuse-unconfined', '--health-file', health], {
        env: {
          PATH: `${await tempDir('genesis-empty-path-')}`,
          DOCKER_HOST: 'unix:///nonexistent/docker.sock',
          GENESIS_QUEUE_PREFIX: `unconfined-${process.pid}`,
        },
      });
      expect(result.status, result.stderr).toBe(1);
      expect(result.stderr).toContain('this worker cannot confine gates (no docker, no bubblewrap) nor agents (no bubblewrap), so it takes no job');
      expect(result.stderr).toContain('[worker-unconfined]');
      expect(result.stderr).toMatch(/genesis(\.js)? doctor/);
      // It never said it was ready, neither on its output nor to a probe.
      expect(result.stdout).not.toContain('ready:');
      await expect(access(health)).rejects.toThrow();
    },
    60_000,
  );
});
