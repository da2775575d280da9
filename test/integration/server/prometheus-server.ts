import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SETUP = fileURLToPath(new URL('../../../scripts/setup-prometheus.sh', import.meta.url));

/** Where scripts/setup-prometheus.sh finds the binary, in the same order. */
function findPrometheus(): string | null {
  for (const candidate of [process.env.GENESIS_PROMETHEUS, '/usr/bin/prometheus']) if (candidate && existsSync(candidate)) return candidate;
  return null;
}

/**
 * Debian's Prometheus, installed by scripts/setup-prometheus.sh when missing (idempotent). Null,
 * with the script's words, when it cannot be installed: the test then skips and says why.
 */
export async function ensurePrometheus(): Promise<{ binary: string | null; why: string }> {
  const found = findPrometheus();
  if (found) return { binary: found, why: '' };
  const out = await new Promise<string>((resolve) =>
    execFile('bash', [SETUP], { timeout: 300_000 }, (error, stdout, stderr) => resolve(`${stdout}${stderr}${error ? ` (${error.message})` : ''}`)),
  );
  return { binary: findPrometheus(), why: out.trim() };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface RunningPrometheus {
  url: string;
  /** An instant query through the HTTP API: the result vector. */
  query(promql: string): Promise<Array<{ metric: Record<string, string>; value: [number, string] }>>;
  stop(): Promise<void>;
}

/** A Prometheus server of its own (its own config and data directory) scraping `target` (host:port) every second. */
export async function startPrometheus(binary: string, target: string): Promise<RunningPrometheus> {
  const dir = await mkdtemp(join(tmpdir(), 'genesis-prometheus-'));
  const config = join(dir, 'prometheus.yml');
  await writeFile(
    config,
    `global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: genesis\n    static_configs:\n      - targets: ['${target}']\n`,
  );
  const port = await freePort();
  const child: ChildProcess = spawn(
    binary,
    [`--config.file=${config}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  child.stderr!.on('data', (chunk: Buffer) => (log += chunk.toString()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  while (
    !(await fetch(`${url}/-/ready`)
      .then((r) => r.ok)
      .catch(() => false))
  ) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`prometheus did not become ready: ${log}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    url,
    async query(promql) {
      const body = (await (await fetch(`${url}/api/v1/query?query=${encodeURIComponent(promql)}`)).json()) as {
        status: string;
        data: { result: any[] };
        error?: string;
      };
      if (body.status !== 'success') throw new Error(`query ${promql} failed: ${body.error}`);
      return body.data.result;
    },
    async stop() {
      child.kill('SIGTERM');
      await new Promise((resolve) => (child.exitCode === null ? child.once('exit', resolve) : resolve(null)));
      await rm(dir, { recursive: true, force: true });
    },
  };
}
