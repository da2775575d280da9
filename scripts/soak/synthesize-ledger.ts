import { spawn } from 'node:child_process';
import { once } from 'node:events';
import type { EpisodeRecord } from '../../src/ledger/episode-record.js';
import { EPISODE_REF_PREFIX } from '../../src/ledger/git-ledger.js';
import { createRng } from '../../src/reliability/prng.js';

const PROMPT = `# Goal\n\nevery src/<id>.txt holds its id\n\n# Task\n\n${'The task, its acceptance text, its paths and the gate commands. '.repeat(20)}\n`;
const GATE_LOG = `$ sh checks/all.sh   [test]\nnot ok: src/t0001.txt holds something else\n[exit 1 after 0.21s]\n`;

/**
 * Adds `count` episode records to a world's ledger with one `git fast-import`: refs, commits and
 * trees shaped exactly as the Ledger writes them (record.json, prompt.md, agent.log, gate.log),
 * for episodes that failed or were rejected long before the real ones. It gives the read paths
 * (`genesis episodes`, `log`, `stats`, `audit`) a ledger of realistic size in seconds.
 */
export async function synthesizeLedger(
  repo: string,
  options: { count: number; tasks: readonly string[]; world: string; base: string; seed: number },
): Promise<void> {
  const rng = createRng(options.seed);
  const git = spawn('git', ['fast-import', '--quiet', '--done'], { cwd: repo, stdio: ['pipe', 'inherit', 'inherit'] });
  const write = async (text: string): Promise<void> => {
    if (!git.stdin.write(text)) await once(git.stdin, 'drain');
  };
  const data = (text: string) => `data ${Buffer.byteLength(text)}\n${text}\n`;
  await write(`blob\nmark :1\n${data(PROMPT)}blob\nmark :2\n${data(GATE_LOG)}`);
  const start = Date.parse('2026-01-01T00:00:00Z');
  for (let i = 0; i < options.count; i++) {
    const started = new Date(start + i * 60_000);
    const record = syntheticRecord(i, started, rng.next(), options);
    const json = `${JSON.stringify(record, null, 2)}\n`;
    const seconds = Math.floor(started.getTime() / 1000);
    await write(
      `commit ${EPISODE_REF_PREFIX}${record.id}\ncommitter Genesis <genesis@localhost> ${seconds} +0000\n` +
        data(`episode ${record.id}: ${record.task} attempt ${record.attempt} ${record.outcome}\n`) +
        `M 100644 :1 prompt.md\nM 100644 :2 gate.log\nM 100644 inline agent.log\n${data(`script: task ${record.task} attempt ${record.attempt}\n`)}` +
        `M 100644 inline record.json\n${data(json)}`,
    );
  }
  await write('done\n');
  git.stdin.end();
  const [code] = (await once(git, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`git fast-import exited with ${code}`);
}

function syntheticRecord(i: number, started: Date, u: number, options: { tasks: readonly string[]; world: string; base: string }): EpisodeRecord {
  const iso = started.toISOString();
  const id = `${iso.slice(0, 10).replaceAll('-', '')}-${iso.slice(11, 19).replaceAll(':', '')}-${iso.slice(20, 23)}-s${i.toString(16).padStart(5, '0')}`;
  const rejected = u < 0.6;
  const outcome = rejected ? 'rejected' : u < 0.95 ? 'failed' : 'abandoned';
  const reason = rejected ? 'test-failed' : outcome === 'failed' ? 'agent-exit' : 'orchestrator-stopped';
  const step = { name: 'test', command: 'sh checks/all.sh', exitCode: 1, timedOut: false, oomKilled: false, durationMs: 210, tests: null };
  return {
    version: 1,
    id,
    world: options.world,
    task: options.tasks[i % options.tasks.length]!,
    attempt: 1 + Math.floor(i / options.tasks.length),
    agent: 'script',
    base: options.base,
    candidate: null,
    commit: null,
    status: 'final',
    outcome,
    reason,
    message: rejected ? 'test failed (exit 1)' : outcome === 'failed' ? 'the agent exited with code 1' : 'the orchestrator stopped before this episode ended',
    signature: `${reason}-${(i % 97).toString(16)}`,
    startedAt: iso,
    endedAt: new Date(started.getTime() + 1500 + Math.floor(u * 2000)).toISOString(),
    phases: { workspace: 80, agent: 10, collect: 40, ...(rejected ? { gate: 600 } : {}) },
    gate: rejected ? { ok: false, sandbox: 'bwrap', summary: 'bwrap: test exit 1 (0.2s)', steps: [step], durationMs: 600, flaky: [] } : null,
    changedFiles: rejected ? [`src/${options.tasks[i % options.tasks.length]}.txt`] : [],
    usage: null,
    worker: 'soak:synthetic',
  };
}
