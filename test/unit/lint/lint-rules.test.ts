import { execFile } from 'node:child_process';
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/temp-dir.js';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../../..');
const BIOME = join(ROOT, 'node_modules/.bin/biome');

interface LintResult {
  code: number;
  /** `rule path:line` for each diagnostic, from biome's GitHub reporter. */
  findings: string[];
}

/**
 * Lints a small tree of `files` (paths relative to the repository root) with the repository's
 * own biome.jsonc, as `npm run lint` does, so each test shows a rule catching a real violation.
 */
async function lint(files: Record<string, string>): Promise<LintResult> {
  const dir = await tempDir('genesis-lint-');
  await copyFile(join(ROOT, 'biome.jsonc'), join(dir, 'biome.jsonc'));
  await mkdir(join(dir, 'lint'));
  await copyFile(join(ROOT, 'lint/biome-layers.json'), join(dir, 'lint/biome-layers.json'));
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  const args = ['lint', '--error-on-warnings', '--vcs-enabled=false', '--reporter=github', '.'];
  const result = await run(BIOME, args, { cwd: dir }).then(
    (ok) => ({ code: 0, stdout: ok.stdout }),
    (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout }),
  );
  const findings = [...result.stdout.matchAll(/title=(lint\/[\w/]+),file=([^,]+),line=(\d+)/g)].map(
    ([, rule, file, line]) => `${rule} ${file!.slice(dir.length + 1)}:${line}`,
  );
  return { code: result.code, findings };
}

const RESTRICTED = 'lint/style/noRestrictedImports';

describe('the layer rules', () => {
  it('reject a world module that imports the gate, an agent, the ledger or deps', async () => {
    const result = await lint({
      'src/world/bad-gate.ts': "import { runGate } from '../gate/gate.js';\nexport const a = runGate;\n",
      'src/world/bad-agents.ts': "import { PRESETS } from '../agents/command/presets/index.js';\nexport const a = PRESETS;\n",
      'src/world/bad-ledger.ts': "import type { Ledger } from '../ledger/ledger.js';\nexport type A = Ledger;\n",
      'src/world/bad-deps.ts': "import { readDepsFiles } from '../deps/read-deps-files.js';\nexport const a = readDepsFiles;\n",
      'src/world/good.ts':
        "import { GenesisError } from '../errors/genesis-error.js';\nimport { git } from '../git/git.js';\nexport const a = [GenesisError, git];\n",
    });
    expect(result.code).not.toBe(0);
    expect(result.findings.sort()).toEqual([
      `${RESTRICTED} src/world/bad-agents.ts:1`,
      `${RESTRICTED} src/world/bad-deps.ts:1`,
      `${RESTRICTED} src/world/bad-gate.ts:1`,
      `${RESTRICTED} src/world/bad-ledger.ts:1`,
    ]);
  });

  it('reject an upward import in the other layers and allow the downward one', async () => {
    const result = await lint({
      'src/sandbox/bad.ts': "import { git } from '../git/git.js';\nexport const a = git;\n",
      'src/gate/bad.ts': "import type { Agent } from '../agents/agent.js';\nexport type A = Agent;\n",
      'src/gate/good.ts':
        "import { git } from '../git/git.js';\nimport type { Sandbox } from '../sandbox/sandbox.js';\nexport const a = git;\nexport type S = Sandbox;\n",
      'src/reliability/bad.ts': "import { readLedger } from '../ledger/ledger.js';\nexport const a = readLedger;\n",
      'src/episode/bad.ts': "import { runWorld } from '../schedule/run/run-world.js';\nexport const a = runWorld;\n",
      'src/operations/bad.ts': "import { runEpisode } from '../episode/run-episode.js';\nexport const a = runEpisode;\n",
      'src/schedule/bad.ts': "import { main } from '../cli/main.js';\nexport const a = main;\n",
      'src/retry/bad.ts': "import { git } from '../git/git.js';\nexport const a = git;\n",
      'src/errors/bad.ts': "import { backoffPolicy } from '../retry/backoff-policy.js';\nexport const a = backoffPolicy;\n",
      'src/sandbox/agent/bad.ts': "import { planGate } from '../../gate/plan.js';\nexport const a = planGate;\n",
      'src/sandbox/gate/good.ts': "import { SANDBOX_CONTAINER_LABEL } from './docker/container.js';\nexport const a = SANDBOX_CONTAINER_LABEL;\n",
      'src/cli/commands/run/good.ts': "import { runWorld } from '../../../schedule/run/run-world.js';\nexport const a = runWorld;\n",
    });
    expect(result.findings.sort()).toEqual([
      `${RESTRICTED} src/episode/bad.ts:1`,
      `${RESTRICTED} src/errors/bad.ts:1`,
      `${RESTRICTED} src/gate/bad.ts:1`,
      `${RESTRICTED} src/operations/bad.ts:1`,
      `${RESTRICTED} src/reliability/bad.ts:1`,
      `${RESTRICTED} src/retry/bad.ts:1`,
      `${RESTRICTED} src/sandbox/agent/bad.ts:1`,
      `${RESTRICTED} src/sandbox/bad.ts:1`,
      `${RESTRICTED} src/schedule/bad.ts:1`,
    ]);
  });

  it("keep a run's helpers importing one way (loop → wakes → decide → carry-out → ports), each step also held to its layer", async () => {
    const result = await lint({
      'src/schedule/run/carry-out/bad-up.ts': "import { apply } from '../decide/apply.js';\nexport const a = apply;\n",
      'src/schedule/run/ports/bad-up.ts': "import { takeWake } from '../wakes/take-wake.js';\nexport const a = takeWake;\n",
      'src/schedule/run/wakes/bad-wiring.ts': "import { openRun } from '../open-run.js';\nexport const a = openRun;\n",
      'src/schedule/run/decide/bad-layer.ts': "import { main } from '../../../cli/main.js';\nexport const a = main;\n",
      'src/schedule/run/loop/good.ts':
        "import { apply } from '../decide/apply.js';\nimport { endWait } from '../carry-out/waits.js';\nimport type { Run } from '../ports/state.js';\nimport { nextWake } from '../../run-policy.js';\nexport const a = [apply, endWait, nextWake];\nexport type R = Run;\n",
      'src/schedule/run/carry-out/good.ts':
        "import { endWait } from './waits.js';\nimport type { Run } from '../ports/state.js';\nexport const a = endWait;\nexport type R = Run;\n",
      'src/schedule/run/good.ts':
        "import { runLoop } from './loop/run-loop.js';\nimport type { Run } from './ports/state.js';\nexport const a = runLoop;\nexport type R = Run;\n",
    });
    expect(result.findings.sort()).toEqual([
      `${RESTRICTED} src/schedule/run/carry-out/bad-up.ts:1`,
      `${RESTRICTED} src/schedule/run/decide/bad-layer.ts:1`,
      `${RESTRICTED} src/schedule/run/ports/bad-up.ts:1`,
      `${RESTRICTED} src/schedule/run/wakes/bad-wiring.ts:1`,
    ]);
  });

  it('keep the construction of adapters in the composition roots (src/compose, src/cli)', async () => {
    const result = await lint({
      'src/schedule/bad.ts':
        "import { createSandbox } from '../sandbox/create-sandbox.js';\nimport { MemoryLeaseStore } from '../queue/memory/memory-lease-store.js';\nexport const a = [createSandbox, MemoryLeaseStore];\n",
      'src/integrate/bad.ts': "import { MemoryVerificationQueue } from '../queue/memory/verification-queue.js';\nexport const a = MemoryVerificationQueue;\n",
      'src/episode/bad.ts': "import { createAgent } from '../agents/create-agent.js';\nexport const a = createAgent;\n",
      'src/gate/bad.ts': "import { DockerSandbox } from '../sandbox/gate/docker/docker-sandbox.js';\nexport const a = DockerSandbox;\n",
      'src/server/bad.ts': "import { RedisPathLeases } from '../queue/redis/path-leases.js';\nexport const a = RedisPathLeases;\n",
      'src/schedule/up.ts': "import { composeEmbeddedRun } from '../compose/embedded-run.js';\nexport const a = composeEmbeddedRun;\n",
      'src/compose/bad.ts': "import { main } from '../cli/main.js';\nexport const a = main;\n",
      'src/schedule/good.ts':
        "import type { LeaseStore } from '../queue/lease-store.js';\nimport type { RunPorts } from './run/ports/ports.js';\nexport type A = LeaseStore | RunPorts;\n",
      'src/compose/good.ts':
        "import { createSandbox } from '../sandbox/create-sandbox.js';\nimport { MemoryLeaseStore } from '../queue/memory/memory-lease-store.js';\nimport { runWorld } from '../schedule/run/run-world.js';\nexport const a = [createSandbox, MemoryLeaseStore, runWorld];\n",
      'src/cli/commands/run/good.ts': "import { composeEmbeddedRun } from '../../../compose/embedded-run.js';\nexport const a = composeEmbeddedRun;\n",
    });
    expect(result.findings.sort()).toEqual([
      `${RESTRICTED} src/compose/bad.ts:1`,
      `${RESTRICTED} src/episode/bad.ts:1`,
      `${RESTRICTED} src/gate/bad.ts:1`,
      `${RESTRICTED} src/integrate/bad.ts:1`,
      `${RESTRICTED} src/schedule/bad.ts:1`,
      `${RESTRICTED} src/schedule/bad.ts:2`,
      `${RESTRICTED} src/schedule/up.ts:1`,
      `${RESTRICTED} src/server/bad.ts:1`,
    ]);
  });

  it('keep bullmq, ioredis, dockerode, execa and OpenTelemetry inside their adapters', async () => {
    const result = await lint({
      'src/schedule/bad.ts': "import { Queue } from 'bullmq';\nexport const a = Queue;\n",
      'src/world/bad.ts': "import { Redis } from 'ioredis';\nexport const a = Redis;\n",
      'src/gate/bad.ts': "import Docker from 'dockerode';\nexport const a = Docker;\n",
      'src/integrate/bad.ts': "import { execa } from 'execa';\nexport const a = execa;\n",
      'src/agents/bad.ts': "import { trace } from '@opentelemetry/api';\nexport const a = trace;\n",
      'src/git/good.ts': "import { execa } from 'execa';\nexport const a = execa;\n",
      'src/telemetry/good.ts': "import { trace } from '@opentelemetry/api';\nexport const a = trace;\n",
      'src/queue/good.ts': "import { Queue } from 'bullmq';\nimport { Redis } from 'ioredis';\nexport const a = [Queue, Redis];\n",
      'src/sandbox/good.ts': "import Docker from 'dockerode';\nexport const a = Docker;\n",
    });
    expect(result.findings.sort()).toEqual([
      `${RESTRICTED} src/agents/bad.ts:1`,
      `${RESTRICTED} src/gate/bad.ts:1`,
      `${RESTRICTED} src/integrate/bad.ts:1`,
      `${RESTRICTED} src/schedule/bad.ts:1`,
      `${RESTRICTED} src/world/bad.ts:1`,
    ]);
  });
});

describe('the code rules', () => {
  it('reject a floating promise, an import cycle and unused code', async () => {
    const result = await lint({
      'src/schedule/floating.ts': 'async function work(): Promise<number> {\n  return 1;\n}\nexport function go(): void {\n  work();\n}\n',
      'src/schedule/cycle-a.ts': "import { b } from './cycle-b.js';\nexport const a = (): number => b() + 1;\n",
      'src/schedule/cycle-b.ts': "import { a } from './cycle-a.js';\nexport const b = (): number => a() - 1;\n",
      'src/schedule/unused.ts':
        "import { join } from 'node:path';\nconst left = 1;\nexport function f(used: number, unused: number): number {\n  return used;\n}\n",
      'src/schedule/clean.ts': 'export async function go(work: () => Promise<void>): Promise<void> {\n  await work();\n}\n',
    });
    expect(result.code).not.toBe(0);
    expect(result.findings.sort()).toEqual([
      'lint/correctness/noUnusedFunctionParameters src/schedule/unused.ts:3',
      'lint/correctness/noUnusedImports src/schedule/unused.ts:1',
      'lint/correctness/noUnusedVariables src/schedule/unused.ts:2',
      'lint/nursery/noFloatingPromises src/schedule/floating.ts:5',
      'lint/suspicious/noImportCycles src/schedule/cycle-a.ts:1',
      'lint/suspicious/noImportCycles src/schedule/cycle-b.ts:1',
    ]);
  });

  it('pass a clean tree', async () => {
    const result = await lint({
      'src/world/clean.ts':
        "import { GenesisError } from '../errors/genesis-error.js';\nexport const fail = (): never => {\n  throw new GenesisError('x', 'y');\n};\n",
    });
    expect(result).toEqual({ code: 0, findings: [] });
  });
});
