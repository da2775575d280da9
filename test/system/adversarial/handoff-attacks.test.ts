import { afterAll, beforeAll, describe, expect } from 'vitest';
import { itWith } from '../../helpers/services.js';
import { attackRoot, honestTask, runAttackedWorld, type AttackedWorld } from './adversarial-world.js';

/**
 * The handoff file as a lock. An agent (a shell script in the bwrap agent sandbox) pads the shared
 * progress file to just under the per-file limit, with its change otherwise right, so that the next
 * agent's one-line append would take the file over it. Genesis keeps the file within the limit
 * itself by dropping the oldest notes: the next change lands, and the file stays under the limit.
 */
const agent = `#!/bin/sh
mkdir -p src
printf "export const v = '%s';\\n" "$GENESIS_TASK_ID" > "src/$GENESIS_TASK_ID.js"
case "$GENESIS_TASK_ID" in
padder) node -e "const fs = require('node:fs'); const t = fs.readFileSync('PROGRESS.md', 'utf8'); const full = 65536 - 4 - t.length; const n = Math.floor(full / 81); fs.writeFileSync('PROGRESS.md', t + ('x'.repeat(80) + '\\n').repeat(n) + 'y'.repeat(full - n * 81 - 1) + '\\n');" ;;
*) printf -- '- %s: done\\n' "$GENESIS_TASK_ID" >> PROGRESS.md ;;
esac
`;

let w: AttackedWorld;

beforeAll(async () => {
  const dirs = await attackRoot();
  const padder = honestTask('padder');
  const next = honestTask('next');
  const manifest = {
    name: 'handoff-attacks',
    goal: { outcome: 'the modules exist', progressFile: 'PROGRESS.md' },
    verify: { sandbox: 'bwrap', test: 'node --test test/base.test.js', timeoutSec: 60, maxFileKb: 64 },
    protected: ['test/**', 'world.yaml', '.genesis/**'],
    agent: { kind: 'command', preset: 'claude-code', command: ['sh', '.genesis/agent.sh'], timeoutSec: 30, sandbox: 'bwrap' },
    retry: { maxAttempts: 1 },
    parallelism: 1,
    tasks: [padder.task, { ...next.task, dependsOn: ['padder'] }],
  };
  const files = { ...padder.files, ...next.files, 'PROGRESS.md': '# Progress\n- started\n', '.genesis/agent.sh': agent };
  w = await runAttackedWorld({ root: dirs.root, manifest, files, sandbox: 'bwrap' });
}, 300_000);
afterAll(() => w?.dispose());

describe('a handoff file padded to its limit', () => {
  itWith('bwrap')('lands the next change: Genesis drops the oldest notes instead of failing the append', async () => {
    expect(w.episodeOf('padder').outcome).toBe('accepted');
    expect(Buffer.byteLength((await w.world.readFile(w.episodeOf('padder').commit!, 'PROGRESS.md')) ?? '')).toBe(65532);
    const after = w.episodeOf('next');
    expect(after, after.message ?? '').toMatchObject({ outcome: 'accepted' });
    expect((await w.artifactsOf('next')).agentLog).toMatch(
      /handoff: PROGRESS\.md was \d+ bytes, over the 65536-byte file limit; Genesis dropped its \d+ oldest line\(s\)/,
    );
    const text = (await w.world.readFile('main', 'PROGRESS.md')) ?? '';
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(64 * 1024);
    expect(text.startsWith('# Progress\n')).toBe(true);
    expect(text.trimEnd().endsWith('- next: done')).toBe(true);
    expect(text).not.toContain('- started');
  });
});
