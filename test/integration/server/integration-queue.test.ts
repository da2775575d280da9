import { join } from 'node:path';
import { expect } from 'vitest';
import { createServerApp } from '../../../src/server/create-app.js';
import { git, gitValue } from '../../../src/git/git.js';
import { LocalWorld } from '../../../src/world/local-world.js';
import { startCli } from '../../helpers/cli-process.js';
import { itWith } from '../../helpers/services.js';
import { slowGateSeed } from '../../helpers/slow-gate-world.js';
import { tempDir } from '../../helpers/temp-dir.js';

interface View {
  run: string | null;
  current: boolean;
  head: string | null;
  entries: Array<{
    id: string;
    task: string;
    stage: string;
    onto: string | null;
    commit: string | null;
    position: number;
    onTopOf: { kind: string; id?: string; task?: string };
  }>;
  counts: Record<string, number>;
}

itWith('bwrap')(
  'the dashboard shows the integration queue of a run in flight: what is verified on top of what, and what waits',
  async () => {
    const dir = await tempDir('genesis-queue-view-');
    const worldPath = join(dir, 'w.world');
    const init = startCli(['init', '--world', worldPath, '--from', await slowGateSeed(dir)]);
    expect(await init.exited, init.stderr()).toBe(0);
    const world = await LocalWorld.open(worldPath);
    const { app } = createServerApp({ world });
    const view = async (): Promise<View> => {
      const response = await app.request('/api/integration');
      expect(response.status, await response.clone().text()).toBe(200);
      return (await response.json()) as View;
    };

    const before = await view();
    expect(before).toMatchObject({ run: null, at: null, current: false, entries: [] });

    const run = startCli(['run', '--world', worldPath, '--json']);
    const seen: View[] = [];
    let code: number | null | undefined;
    void run.exited.then((c) => (code = c));
    while (code === undefined) {
      const v = await view();
      if (v.entries.length > 0) seen.push(v);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(code, run.stderr()).toBe(0);

    // While the run went, the queue was the running scheduler's, and changes were verified in it.
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((v) => v.current && /genesis run on .* \(pid \d+\)/.test(v.run ?? ''))).toBe(true);
    const entries = seen.flatMap((v) => v.entries);
    // Judged on its tip: by its episode's own gate (a reservation, in process) or by a verification.
    const verifying = entries.filter((e) => e.stage === 'gating' || e.stage === 'verifying');
    expect(verifying.length).toBeGreaterThan(0);
    // Every speculative commit shown is real and extends exactly what the view says it sits on.
    for (const e of entries.filter((e) => e.commit !== null)) {
      expect(await gitValue(['rev-parse', `${e.commit}^`], { cwd: worldPath })).toBe(e.onto);
      expect(['head', 'change']).toContain(e.onTopOf.kind);
    }
    for (const v of seen) {
      v.entries.forEach((e, i) => {
        expect(e.position).toBe(i + 1);
        if (e.onTopOf.kind === 'change') expect(v.entries[i - 1]).toMatchObject({ id: e.onTopOf.id, task: e.onTopOf.task, commit: e.onto });
        if (e.onTopOf.kind === 'head') expect(e.onto).toBe(v.head);
      });
      expect(Object.values(v.counts).reduce((a, b) => a + b, 0)).toBe(v.entries.length);
    }
    // What the queue judged is what landed: speculative commits seen being judged are on the accepted branch now.
    const accepted = new Set((await git(['rev-list', 'main'], { cwd: worldPath })).stdout.split('\n').filter(Boolean));
    expect(verifying.some((e) => accepted.has(e.commit!))).toBe(true);

    // Once the run is over, the queue it left is empty and nobody's.
    expect(await view()).toMatchObject({ run: null, current: false, entries: [] });
  },
  180_000,
);
