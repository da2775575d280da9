import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { utimes } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { WorkerHealthFile } from '../../../src/cli/commands/worker/health-file.js';
import { tempDir } from '../../helpers/temp-dir.js';

/**
 * The probes deploy/kubernetes gives a worker pod, run as the kubelet runs them (a shell command
 * in the container, exit 0 or not) against the file `genesis worker --health-file` keeps: ready
 * only when the worker said ready, alive while it is rewritten, a stopping worker alive but not
 * ready, a stuck one (its file no longer rewritten) neither.
 */
const ROOT = resolve(import.meta.dirname, '../../..');
const PROBE_PATH = '/run/genesis/health';
const worker = parseAllDocuments(readFileSync(join(ROOT, 'deploy/kubernetes/base/worker.yaml'), 'utf8'))
  .map((d) => d.toJSON())
  .find((o) => o.kind === 'Deployment').spec.template.spec.containers[0];

function probe(kind: 'startupProbe' | 'readinessProbe' | 'livenessProbe', file: string): boolean {
  const [cmd, ...args] = (worker[kind].exec.command as string[]).map((part) => part.replaceAll(PROBE_PATH, file));
  try {
    execFileSync(cmd!, args, { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
const probes = (file: string) => ({ startup: probe('startupProbe', file), ready: probe('readinessProbe', file), alive: probe('livenessProbe', file) });

describe("a worker pod's probes on its health file", () => {
  it('read the path the worker writes', () => {
    expect(worker.args).toContain(`--health-file=${PROBE_PATH}`);
  });

  it('say ready, not ready while stopping or unconfined, and neither once the file goes stale or away', async () => {
    const dir = await tempDir('genesis-health-');
    const file = join(dir, 'run', 'health');
    const health = new WorkerHealthFile(file);
    expect(probes(file)).toEqual({ startup: false, ready: false, alive: false });

    await health.set('ready', { worker: 'w1' });
    expect(readFileSync(file, 'utf8').split('\n')[0]).toBe('ready');
    expect(probes(file)).toEqual({ startup: true, ready: true, alive: true });

    await health.set('unconfined');
    expect(probes(file)).toEqual({ startup: true, ready: false, alive: true });

    await health.set('stopping');
    expect(probes(file)).toEqual({ startup: true, ready: false, alive: true });

    // A worker whose event loop stopped rewrites nothing: three minutes later the kubelet restarts it.
    await health.set('ready');
    const past = new Date(Date.now() - 3 * 60_000);
    await utimes(file, past, past);
    expect(probes(file)).toEqual({ startup: false, ready: false, alive: false });

    await health.remove();
    expect(probes(file)).toEqual({ startup: false, ready: false, alive: false });
  });
});
