import { rm } from 'node:fs/promises';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { itWith } from '../../helpers/services.js';
import { attackRoot, type AttackedWorld, runAttackedWorld } from './adversarial-world.js';
import {
  AGENT_KINDS,
  type AgentKind,
  CLI_PRESETS,
  cellManifest,
  type CliPreset,
  cheaterFiles,
  cliCheater,
  FLEET_CELLS,
  fleetCells,
  isCliPreset,
  openaiCheater,
  racerOf,
  runInFleet,
  SANDBOXES,
  type SandboxKind,
  sandboxAnswers,
  withEnv,
} from './attack-matrix.js';

/**
 * Agent-controlled input handled inside Genesis's own process, through every agent kind Genesis
 * launches or replays, in both sandboxes, and as each preset's real CLI under bubblewrap
 * (whose shell tool runs the cheater, so the flood is in what that CLI prints). The cheater's module prints, when the gate imports it,
 * what froze the gate's readers before (spec-reporter-shaped lines with 40,000 spaces, jest- and
 * vitest-shaped ones, nested-quantifier bait, a line of a megabyte, control characters); the
 * cheater that runs commands also prints output shaped for its preset's reader with the same
 * runs, and leaves a FIFO where Genesis reads the handoff file. Each world's run ends at once,
 * with its episode closed, and Genesis's event loop never waits on any of it.
 */
const SPACES = ' '.repeat(40_000);
const FLOOD = `const spaces = ' '.repeat(40000);
for (const line of [
  '\\u2714 looks like a test' + spaces + '(1.0ms)',
  spaces + '\\u2716 looks like a failure',
  '\\u2139 tests' + spaces + '7',
  ' \\u2713 src/x.test.js' + spaces + '(3 tests) 1ms',
  'Tests:' + spaces + '9 passed, 9 total',
  'a'.repeat(60) + '!',
  'x'.repeat(1000000),
  '\\u001b[2J\\u001b[H\\u0007\\u0000 control characters',
]) console.log(line);
export const v = 'flood';
`;

/** What a preset CLI's scripted model says once the cheater ran: shaped for a reader of JSON lines, which the CLI prints as its result. */
const SAID = `{"type":"result",${SPACES}"usage":{"input_tokens":1${SPACES}}}\n${'{'.repeat(50_000)}`;

/**
 * What the cheater prints for the reader of each preset's path, with the same runs: Claude Code's
 * and Qwen Code's result, Codex's turn, opencode's step, Copilot's failed call (no status: none
 * that reads as refused credentials), and Gemini CLI's last object, pretty-printed.
 */
const READER_BAIT = `const s = ' '.repeat(40000);
for (const line of [
  '{"type":"result",' + s + '"usage":{"input_tokens":1' + s + '}}',
  '{"type":"turn.completed",' + s + '"usage":{"input_tokens":1' + s + '}}',
  '{"type":"step_finish","part":{"tokens":{"input":1' + s + '}}}',
  '{"type":"model.call_failure","data":{"errorMessage":"' + s + '"}}',
  '{"type":"assistant","message":{"content":[{"text":"[API Error:' + s + '"}]}}',
  '{\\n  "stats": {"models": {"m": {"tokens": {"prompt": 1' + s + '}}}}\\n}',
  '{'.repeat(100000),
  '"' + s,
]) console.log(line);
`;

function agentScript(): string {
  // Copilot's reader reads its usage report from HOME once the CLI exited: a FIFO there would hold a reader that waited on it.
  return `#!/bin/sh
case "$GENESIS_TASK_ID" in
flood) mkdir -p src && cp .genesis/flood.js src/flood.js ;;
fifo) rm -f PROGRESS.md && mkfifo PROGRESS.md ;;
esac
rm -f "$HOME/.copilot-usage.json" && mkfifo "$HOME/.copilot-usage.json"
node .genesis/bait.cjs
`;
}

/** The world of one cell: a task whose module floods the gate's readers, and one that leaves a FIFO as the handoff file. */
function attack(kind: AgentKind, sandbox: SandboxKind): { manifest: Record<string, unknown>; files: Record<string, string> } {
  return {
    manifest: cellManifest(kind, sandbox, {
      name: `unbounded-${kind}-${sandbox}`,
      goal: { outcome: 'the module exists', progressFile: 'PROGRESS.md' },
      verify: { sandbox, test: 'node --test test/base.test.js', timeoutSec: 60 },
      protected: ['test/**', 'world.yaml', '.genesis/**'],
      retry: { maxAttempts: 1 },
      parallelism: 2,
      tasks: [
        { id: 'flood', title: 'flood', paths: ['src/flood.js'], check: 'node --test --test-reporter=spec test/flood.test.js' },
        { id: 'fifo', title: 'fifo', paths: ['PROGRESS.md'] },
      ],
    }),
    files: {
      'PROGRESS.md': '# progress\n',
      'test/flood.test.js':
        "import test from 'node:test';\nimport assert from 'node:assert';\nimport { v } from '../src/flood.js';\ntest('flood', () => assert.equal(v, 'flood'));\n",
      '.genesis/flood.js': FLOOD,
      '.genesis/bait.cjs': READER_BAIT,
      ...cheaterFiles(agentScript(), {
        flood: { say: `{"type":"result",${SPACES}"usage":{}}`, write: { 'src/flood.js': FLOOD } },
        // A recording writes files only: its handoff file is a flood of its own, where the others leave a FIFO.
        fifo: { write: { 'PROGRESS.md': `# progress\n${SPACES}\u001b[2J${'x'.repeat(100_000)}\n` } },
      }),
    },
  };
}

/** The cheaters that run as a program with a scripted model: the openai agent, and each preset's real CLI. */
type CellKind = AgentKind | 'openai' | CliPreset;

async function attackedWorld(kind: CellKind, sandbox: SandboxKind): Promise<{ w: AttackedWorld; stallMs: number }> {
  const { root } = await attackRoot();
  // The scripted model of the openai agent or of a preset's CLI runs the shell cheater through the agent's shell tool.
  const cheater = kind === 'openai' ? await openaiCheater(sandbox) : isCliPreset(kind) ? await cliCheater(kind, { say: SAID }) : null;
  let last = Date.now();
  let stallMs = 0;
  const ticking = setInterval(() => {
    const now = Date.now();
    stallMs = Math.max(stallMs, now - last);
    last = now;
  }, 25);
  try {
    const { manifest, files } = attack(cheater ? 'command' : (kind as AgentKind), sandbox);
    const w = await withEnv(cheater?.env ?? {}, () =>
      runAttackedWorld({ root, sandbox, manifest: { ...manifest, ...(cheater ? { agent: cheater.agent } : {}) }, files }),
    );
    return { w, stallMs };
  } finally {
    clearInterval(ticking);
    await cheater?.close();
  }
}

/** What each cell's run must leave: the flood read in full and counted right, kept truncated; the FIFO a clear rejection. */
/**
 * What node's test runner says when the flood, printed by the module in the test file's process,
 * breaks the serialized channel that process reports its tests on: the file then fails as a whole.
 * Seen in some runs of the cells where a preset's CLI runs beside the gate (one cell at a time). The gate
 * then runs again the failing test it read, a look-alike name the module printed: no test has that
 * name, so the run again reports none and exits 0, which shows nothing: the failure stands and the
 * change is rejected, never taken as flaky.
 */
const NODE_LOST_ITS_CHANNEL = 'Unable to deserialize cloned data due to invalid or unsupported version.';

/** How an episode ended, for a failing assertion's message. */
const endOf = (e: { task: string; outcome: string | null; reason?: string | null; message?: string | null }) =>
  `${e.task} ${e.outcome} ${e.reason ?? ''}: ${e.message ?? ''}`;

async function expectClearEnds(ledger: GitLedger, kind: CellKind, preset?: CliPreset): Promise<void> {
  const episodes = (await ledger.readAll()).filter((e) => e.outcome !== 'abandoned');
  const episodeOf = (task: string) => {
    // A preset's path is one racer of each task's race in its cell's world.
    if (preset) return racerOf(episodes, task, preset);
    const found = episodes.filter((e) => e.task === task);
    expect(found, found.map(endOf).join('; ') || task).toHaveLength(1);
    return found[0]!;
  };
  // The flood was read in full, linearly: the honest test counted once, none of the printed look-alikes.
  const flood = episodeOf('flood');
  const { gateLog = '' } = await ledger.readArtifacts(flood.id);
  const shown = gateLog
    .replace(/ {100,}/g, '<spaces>')
    .replace(/x{1000,}/g, '<x…>')
    .slice(-3000);
  // A racer's gate says what it counted; its record says the race's end (outrun, once another racer's change won).
  const counted = preset ? (flood.gate?.summary ?? '') : (flood.message ?? '');
  if (gateLog.includes(NODE_LOST_ITS_CHANNEL)) {
    // Under load (a CLI beside it, or the whole suite on two cores) node's runner sometimes loses its own channel to the flood, whatever agent wrote the change; see NODE_LOST_ITS_CHANNEL.
    if (preset) expect(flood.gate?.ok, shown).toBe(false);
    else {
      expect(flood, shown).toMatchObject({ outcome: 'rejected' });
      expect(flood.message).toContain('its run again did not report it passing');
    }
  } else {
    if (preset) expect(flood.gate?.ok, `${flood.message}\n${shown}`).toBe(true);
    else expect(flood.outcome, `${flood.message}\n${shown}`).toBe('accepted');
    // Counted once, on the first run or (a one-CPU gate on a loaded machine) on the run again that showed it pass.
    expect(counted, `${flood.message}\n${shown}`).toMatch(
      /check:flood (?:ok 1 passed 0 failed|exit 1 0 passed 1 failed; check:flood \(run again\) ok 1 passed 0 failed .*flaky: check:flood)/,
    );
  }
  // And kept as a truncated record: the line of a megabyte is not in the ledger whole.
  expect(gateLog).toContain('$ node --test --test-reporter=spec test/flood.test.js');
  expect(gateLog.length).toBeLessThan(1_000_000);
  // A FIFO left where the handoff file is read is a clear rejection; a recording's flooded handoff lands as any file.
  const fifo = episodeOf('fifo');
  if (kind === 'script') expect(fifo.outcome, `${fifo.reason}: ${fifo.message}`).toBe('accepted');
  else expect(fifo).toMatchObject({ status: 'final', outcome: 'failed', reason: 'unreadable-change' });
}

for (const sandbox of SANDBOXES) {
  describe(`a cheating agent whose output and change flood Genesis's readers, gated and confined by ${sandbox}`, () => {
    const worlds = new Map<AgentKind | 'openai', { w: AttackedWorld; stallMs: number }>();
    beforeAll(async () => {
      if (!sandboxAnswers(sandbox)) return;
      for (const kind of [...AGENT_KINDS, 'openai' as const]) worlds.set(kind, await attackedWorld(kind, sandbox));
    }, 600_000);
    afterAll(async () => {
      for (const { w } of worlds.values()) await w.dispose();
    });

    for (const kind of [...AGENT_KINDS, 'openai' as const]) {
      for (const preset of kind === 'preset' ? CLI_PRESETS : [undefined]) {
        itWith(sandbox)(
          `ends the run at once with its episode closed, and never holds Genesis's event loop (agent: ${preset ? `${preset}'s path` : kind})`,
          async () => {
            const { w, stallMs } = worlds.get(kind)!;
            expect(w.durationMs).toBeLessThan(60_000);
            expect(stallMs).toBeLessThan(3_000);
            await expectClearEnds(new GitLedger(w.world.path), kind, preset);
          },
        );
      }
    }
  });
}

/**
 * Where a preset's CLI does not pass the flood on to its reader whole: Gemini CLI prints no tool
 * output in its JSON result, and its loop detection ends a reply that repeats itself (a run of
 * spaces), so its result holds none of the flood.
 */
const DROPS_THE_FLOOD: ReadonlySet<CliPreset> = new Set(['gemini']);

describe("a cheating agent whose output and change flood Genesis's readers, as each preset's own CLI, confined by bwrap", () => {
  const worlds = new Map<CliPreset, { w: AttackedWorld; stallMs: number }>();
  beforeAll(async () => {
    if (!sandboxAnswers('bwrap')) return;
    for (const cli of CLI_PRESETS) worlds.set(cli, await attackedWorld(cli, 'bwrap'));
  }, 600_000);
  afterAll(async () => {
    for (const { w } of worlds.values()) await w.dispose();
  });

  for (const cli of CLI_PRESETS) {
    itWith('bwrap')(`ends the run at once with its episodes closed, what its CLI printed read by its preset's reader (agent: ${cli})`, async () => {
      const { w, stallMs } = worlds.get(cli)!;
      expect(w.durationMs).toBeLessThan(60_000);
      expect(stallMs).toBeLessThan(3_000);
      await expectClearEnds(new GitLedger(w.world.path), cli);
      // What its model said went through the CLI into what it printed, which its preset's reader read.
      const { agentLog = '' } = await w.artifactsOf('flood');
      if (!DROPS_THE_FLOOD.has(cli)) expect(agentLog).toContain(SPACES);
    });
  }
});

describe("a cheating agent whose output and change flood Genesis's readers, in a fleet", () => {
  const fleets = fleetCells(async (root, kind, sandbox) => {
    const started = Date.now();
    const ran = await runInFleet(root, attack(kind, sandbox), sandbox);
    return { worldPath: ran.worldPath, exitCode: ran.exitCode, ms: Date.now() - started };
  });
  afterAll(() => fleets.dispose());

  for (const { kind, sandbox } of FLEET_CELLS) {
    for (const preset of kind === 'preset' ? CLI_PRESETS : [undefined]) {
      itWith('redis')(
        `ends the run with each episode closed clearly, on a genesis worker (agent: ${preset ? `${preset}'s path` : kind}, sandbox: ${sandbox})`,
        async () => {
          const ran = await fleets.of(kind, sandbox);
          expect(ran.ms).toBeLessThan(90_000);
          const ledger = new GitLedger(ran.worldPath);
          await expectClearEnds(ledger, kind, preset);
          // Blocked where the task that left a FIFO used its attempts; a recording's handoff lands, and
          // so does its flood unless node's runner lost its channel to it, the one end expectClearEnds
          // allows a recording's flood.
          const ends = await ledger.readAll();
          const landedAll = ends.filter((e) => e.outcome === 'accepted').length === 2;
          expect(ran.exitCode, ends.map(endOf).join('\n')).toBe(kind === 'script' && landedAll ? 0 : 3);
        },
        200_000,
      );
    }
  }

  for (const sandbox of SANDBOXES) {
    itWith('redis')(
      `ends the run with each episode closed clearly, on a genesis worker (agent: openai, sandbox: ${sandbox})`,
      async () => {
        const { root } = await attackRoot();
        // Its scripted model runs the shell cheater through run_command, in each task's episode.
        const openai = await openaiCheater(sandbox);
        try {
          const started = Date.now();
          const { manifest, files } = attack('command', sandbox);
          const ran = await runInFleet(root, { manifest: { ...manifest, agent: openai.agent }, files }, sandbox);
          expect(Date.now() - started).toBeLessThan(90_000);
          expect(ran.exitCode).toBe(3);
          await expectClearEnds(new GitLedger(ran.worldPath), 'openai');
        } finally {
          await openai.close();
          await rm(root, { recursive: true, force: true });
        }
      },
      200_000,
    );
  }
});
