import { DepsCache } from '../../../deps/cache/cache.js';
import { formatMb, readDepsCacheStatus } from '../../../deps/cache/status.js';
import { prepareDeps } from '../../../deps/prepare-deps.js';
import { GenesisError } from '../../../errors/genesis-error.js';
import { createSandbox } from '../../../sandbox/create-sandbox.js';
import { LocalWorld } from '../../../world/local-world.js';
import { formatTable, printJson } from '../../output.js';

function ago(ms: number): string {
  const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
  if (s < 90) return `${s}s ago`;
  if (s < 5400) return `${Math.round(s / 60)}m ago`;
  if (s < 172_800) return `${Math.round(s / 3600)}h ago`;
  return `${Math.round(s / 86_400)}d ago`;
}

export async function listDeps(json: boolean): Promise<void> {
  const cache = new DepsCache();
  const sets = await cache.list();
  if (json) {
    printJson({
      root: cache.root,
      capBytes: cache.capBytes,
      sets: sets.map((s) => ({
        key: s.key,
        bytes: s.bytes,
        entries: s.entries,
        lastUsed: new Date(s.lastUsedMs).toISOString(),
        createdAt: s.createdAt,
        paths: s.paths,
        files: s.files,
        install: s.install,
        environment: s.environment,
        dir: s.dir,
      })),
    });
    return;
  }
  const status = await readDepsCacheStatus(cache);
  process.stdout.write(`${status.root}: ${status.sets} set(s), ${formatMb(status.bytes)} of ${formatMb(status.capBytes)}\n`);
  if (sets.length === 0) return;
  const rows = sets.map((s) => [s.key.slice(0, 12), formatMb(s.bytes), s.entries, ago(s.lastUsedMs), s.paths.join(','), s.install]);
  process.stdout.write(`${formatTable(['KEY', 'SIZE', 'ENTRIES', 'LAST USE', 'PATHS', 'INSTALL'], rows)}\n`);
}

export async function prepareWorldDeps(opts: {
  world: string;
  commit?: string | undefined;
  sandbox?: 'auto' | 'docker' | 'bwrap' | 'none' | undefined;
  json: boolean;
}): Promise<void> {
  const world = await LocalWorld.open(opts.world);
  const branchHead = async () => world.head((await world.manifestAt(`HEAD`).catch(() => null))?.branch ?? 'main');
  const commit = opts.commit ? await world.resolveRef(opts.commit) : await branchHead();
  if (!commit) throw new GenesisError('commit-unknown', `no commit ${opts.commit} in the world`, { hint: 'pass a branch, tag or commit id of the world' });
  const manifest = await world.manifestAt(commit);
  if (!manifest.verify.deps)
    throw new GenesisError('deps-not-configured', `world ${manifest.name} has no verify.deps`, {
      hint: 'add verify.deps (files, install, paths) to world.yaml; docs/guides/dependencies.md has recipes for npm, pnpm, yarn, pip and cargo',
    });
  const sandbox = await createSandbox(opts.sandbox ?? manifest.verify.sandbox, { image: manifest.verify.image });
  const prepared = await prepareDeps({
    repo: world.path,
    tree: commit,
    spec: manifest.verify.deps,
    sandbox,
    image: manifest.verify.image,
    cache: new DepsCache(),
  });
  if (!prepared.ok) {
    process.stderr.write(prepared.log);
    throw new GenesisError('deps-failed', prepared.message, { hint: "fix the install command or the dependency files; the log above is the install's" });
  }
  if (opts.json) return printJson({ key: prepared.key, hit: prepared.hit, durationMs: prepared.durationMs, dir: new DepsCache().setDir(prepared.key) });
  process.stdout.write(
    `${prepared.key.slice(0, 12)} ${prepared.hit ? 'was already prepared' : `prepared in ${(prepared.durationMs / 1000).toFixed(1)}s`} (${new DepsCache().setDir(prepared.key)})\n`,
  );
}

export async function collectDeps(opts: { maxMb?: string | undefined; all: boolean; json: boolean }): Promise<void> {
  const cache = new DepsCache();
  const cap = opts.all ? 0 : opts.maxMb !== undefined ? Number(opts.maxMb) * 1024 * 1024 : cache.capBytes;
  if (!Number.isFinite(cap) || cap < 0)
    throw new GenesisError('usage', `--max-mb must be a number of MiB, got ${opts.maxMb}`, { hint: 'e.g. genesis deps gc --max-mb 5000' });
  const before = (await readDepsCacheStatus(cache)).bytes;
  const { removed, staging } = await cache.gc({ capBytes: cap, ...(opts.all ? { graceMs: 0 } : {}) });
  const after = (await readDepsCacheStatus(cache)).bytes;
  if (opts.json) return printJson({ removed, staging, bytesBefore: before, bytesAfter: after });
  process.stdout.write(`removed ${removed.length} set(s) and ${staging} leftover install(s): ${formatMb(before)} -> ${formatMb(after)}\n`);
}
