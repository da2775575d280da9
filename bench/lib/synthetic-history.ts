import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { newEpisodeId } from '../../src/episode/episode-job.js';
import { acceptedCommitMessage } from '../../src/world/history/accepted-history.js';
import type { EpisodeRecord } from '../../src/ledger/episode-record.js';
import { EPISODE_REF_PREFIX } from '../../src/ledger/git-ledger.js';

/**
 * Long histories in seconds: everything goes through one `git fast-import` process, which writes a
 * single pack, instead of one `git commit` (and a handful of processes) per commit.
 */

const COMMITTER = 'Bench <bench@localhost>';
const FILES = 100;

function fileName(index: number): string {
  return `history/file-${String(index).padStart(3, '0')}.txt`;
}

function data(text: string): string {
  return `data ${Buffer.byteLength(text)}\n${text}\n`;
}

async function fastImport(repo: string, stream: string): Promise<void> {
  // No fsync: synthetic data needs no durability, and syncing 10,000 loose ref files costs ~5 s.
  const child = spawn('git', ['-c', 'core.fsync=none', 'fast-import', '--quiet', '--done'], { cwd: repo, stdio: ['pipe', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exit = new Promise<number>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve(code ?? -1));
  });
  child.stdin.end(`${stream}done\n`);
  const code = await exit;
  if (code !== 0) throw new Error(`git fast-import failed (exit ${code}): ${stderr.slice(-1000)}`);
}

/**
 * Puts `count` accepted-looking commits on top of `branch`: each rewrites one of 100 files under
 * history/ with 1 KiB of fresh random text (so a full clone has real bytes to copy) and carries
 * the Genesis trailers, as an episode's accepted commit does. The world's own files are untouched.
 */
export async function appendCommits(repo: string, branch: string, count: number): Promise<void> {
  const start = Math.floor(Date.now() / 1000) - count;
  const parts: string[] = [];
  for (let i = 1; i <= count; i++) {
    const message = acceptedCommitMessage({
      title: `filler change ${i}`,
      episode: `history-${i}`,
      task: `history-${i}`,
      attempt: 1,
      agent: 'bench',
      verified: 'docker: test ok (0.3s)',
    });
    parts.push(
      `commit refs/heads/${branch}\n`,
      `committer ${COMMITTER} ${start + i} +0000\n`,
      data(message),
      i === 1 ? `from refs/heads/${branch}^0\n` : '',
      // The first commit writes all the files, so a short and a long history have the same tree
      // and a checkout costs the same: only the history differs.
      ...(i === 1 ? Array.from({ length: FILES }, (_, f) => f) : [i % FILES]).map(
        (f) => `M 100644 inline ${fileName(f)}\n${data(randomBytes(768).toString('base64'))}`,
      ),
      '\n',
    );
  }
  await fastImport(repo, parts.join(''));
}

/**
 * Adds `count` final ledger records, each a ref `refs/genesis/episodes/<id>` on a commit whose
 * tree holds `record.json` (the layout src/ledger/ledger.ts writes), for tasks the world does not
 * have (so the scheduler ignores them, as it ignores the records of long-finished tasks).
 */
export async function addLedgerRecords(repo: string, count: number, base: string): Promise<void> {
  const start = Date.now() - count * 60_000;
  const parts: string[] = [];
  for (let i = 1; i <= count; i++) {
    const startedAt = new Date(start + i * 60_000);
    const id = newEpisodeId(startedAt);
    const record: EpisodeRecord = {
      version: 1,
      id,
      world: 'bench',
      task: `history-${i}`,
      attempt: 1,
      agent: 'command:sh -c echo',
      base,
      candidate: base,
      commit: base,
      status: 'final',
      outcome: 'accepted',
      reason: null,
      message: 'docker: test ok 1 passed 0 failed (0.3s)',
      signature: null,
      startedAt: startedAt.toISOString(),
      endedAt: new Date(startedAt.getTime() + 700).toISOString(),
      phases: { workspace: 30, agent: 5, collect: 20, gate: 400, integrate: 25 },
      gate: {
        ok: true,
        sandbox: 'docker',
        summary: 'docker: test ok 1 passed 0 failed (0.3s)',
        steps: [
          {
            name: 'test',
            command: 'node --test test/',
            exitCode: 0,
            timedOut: false,
            oomKilled: false,
            durationMs: 300,
            tests: { format: 'tap', passed: 1, failed: 0, skipped: 0 },
          },
        ],
        durationMs: 350,
      },
      changedFiles: [`notes/history-${i}.txt`],
      usage: null,
      worker: 'bench:1',
    };
    parts.push(
      `commit ${EPISODE_REF_PREFIX}${id}\n`,
      `committer ${COMMITTER} ${Math.floor(startedAt.getTime() / 1000)} +0000\n`,
      data(`episode ${id}: history-${i} attempt 1 accepted\n`),
      `M 100644 inline record.json\n`,
      data(`${JSON.stringify(record, null, 2)}\n`),
      '\n',
    );
  }
  await fastImport(repo, parts.join(''));
}
