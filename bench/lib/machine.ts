import { execFile } from 'node:child_process';
import { cpus, loadavg, release, totalmem } from 'node:os';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/** What the figures were measured on; printed first so a table is never read without it. */
export interface Machine {
  cpu: string;
  cores: number;
  memoryGb: number;
  kernel: string;
  node: string;
  git: string;
  docker: string;
  bwrap: string;
  /** 1-minute load average when the run started: others' test runs skew every figure. */
  load: number;
}

/** A tool's version line, or why there is none (a missing tool is a fact worth printing). */
async function versionOf(file: string, args: string[]): Promise<string> {
  try {
    const { stdout } = await execFileAsync(file, args, { timeout: 10_000 });
    return stdout.trim().split('\n')[0] ?? '';
  } catch (error) {
    return `unavailable (${(error as { code?: string }).code ?? 'error'})`;
  }
}

export async function describeMachine(): Promise<Machine> {
  const [git, docker, bwrap] = await Promise.all([
    versionOf('git', ['--version']),
    versionOf('docker', ['version', '--format', 'engine {{.Server.Version}} (API {{.Server.APIVersion}})']),
    versionOf('bwrap', ['--version']),
  ]);
  return {
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    memoryGb: Math.round(totalmem() / 2 ** 30),
    kernel: release(),
    node: process.version,
    git,
    docker,
    bwrap,
    load: loadNow(),
  };
}

export function loadNow(): number {
  return Math.round((loadavg()[0] ?? 0) * 100) / 100;
}

export function formatMachine(m: Machine): string {
  return [
    `machine: ${m.cores} cores (${m.cpu}), ${m.memoryGb} GiB, Linux ${m.kernel}`,
    `tools:   node ${m.node}, ${m.git}, docker ${m.docker}, ${m.bwrap}`,
    `load:    ${m.load} (1-minute average at start; above ~0.5 on ${m.cores} cores, something else is running)`,
  ].join('\n');
}
