import { parse as parseYaml } from 'yaml';
import { isGenesisError } from '../errors/genesis-error.js';
import type { AcceptedCommit } from '../world/history/accepted-history.js';
import { git } from '../git/git.js';
import type { WorldManifest } from '../manifest/schema.js';
import type { WorldRepo } from '../world/world-repo.js';
import { acceptedPart, type Adoption } from '../world/history/adoption.js';
import { batchBlobs, batchObjectNames } from './git-batch.js';

/** An accepted commit with what the audit checks about it besides its trailers. */
export interface AuditedCommit extends AcceptedCommit {
  tree: string;
  /** Paths this commit changed against its first parent (all paths for the root commit). */
  changed: string[];
  /** Names the manifest in effect at this commit in `AuditedHistory.manifests`; null without world.yaml. */
  manifestKey: string | null;
  /** The first accepted commit of an adopted world: verified at adoption, like a world's root. */
  adopted?: boolean;
}

/** The accepted history, newest first, and every distinct manifest it carried, read once. */
export interface AuditedHistory {
  commits: AuditedCommit[];
  /** manifestKey → the manifest, or what is wrong with it. */
  manifests: Map<string, WorldManifest | string[]>;
  /** An adopted world's adoption, and how many commits of the repository's own history lie under it (left out of `commits`). */
  adoption: (Adoption & { historyCommits: number }) | null;
}

/**
 * Reads the accepted branch in a fixed number of git processes whatever its length (trailers,
 * trees and changed paths, world.yaml blobs, task directories), plus one manifest read per
 * distinct manifest, so an audit of thousands of commits costs seconds, not a process per commit.
 */
export async function readAuditedHistory(world: WorldRepo, branch: string): Promise<AuditedHistory> {
  const [whole, changes, adoption] = await Promise.all([world.acceptedHistory(branch), readChanges(world.path, `refs/heads/${branch}`), world.adoption()]);
  // An adopted repository's own commits are history: Genesis neither made nor judges them.
  const { accepted, before } = acceptedPart(whole, adoption);
  const keys = await manifestKeys(
    world.path,
    accepted.map((c) => c.commit),
  );
  const commits = accepted.map((c, i): AuditedCommit => {
    const change = changes.get(c.commit);
    return {
      ...c,
      tree: change?.tree ?? '',
      changed: change?.paths ?? [],
      manifestKey: keys[i] ?? null,
      ...(adoption?.commit === c.commit ? { adopted: true } : {}),
    };
  });
  const manifests = new Map<string, WorldManifest | string[]>();
  for (const c of commits) {
    if (c.manifestKey === null || manifests.has(c.manifestKey)) continue;
    manifests.set(c.manifestKey, await world.manifestAt(c.commit).catch((error: unknown) => problemsOf(error)));
  }
  return { commits, manifests, adoption: adoption ? { ...adoption, historyCommits: before.length } : null };
}

function problemsOf(error: unknown): string[] {
  if (!isGenesisError(error)) throw error;
  return error.message
    .split('\n')
    .map((line) => line.replace(/^\s*-\s*/, ''))
    .filter(Boolean);
}

/**
 * What the manifest at each commit is made of: world.yaml's blob and, when it names a tasksDir,
 * that directory's tree. Equal keys mean equal manifests, so each is parsed once.
 */
async function manifestKeys(repo: string, commits: readonly string[]): Promise<Array<string | null>> {
  const yamlBlobs = await batchObjectNames(
    repo,
    commits.map((c) => `${c}:world.yaml`),
  );
  const distinct = [...new Set(yamlBlobs.flatMap((b) => (b ? [b] : [])))];
  const texts = await batchBlobs(repo, distinct);
  const tasksDirOf = new Map(distinct.map((blob, i) => [blob, tasksDirIn(texts[i] ?? '')]));
  const dirRevisions = commits.flatMap((c, i) => {
    const dir = yamlBlobs[i] ? tasksDirOf.get(yamlBlobs[i]!) : null;
    return dir ? [`${c}:${dir}`] : [];
  });
  const dirTrees = await batchObjectNames(repo, dirRevisions);
  let next = 0;
  return commits.map((_, i) => {
    const blob = yamlBlobs[i];
    if (!blob) return null;
    return tasksDirOf.get(blob) ? `${blob}:${dirTrees[next++] ?? 'none'}` : blob;
  });
}

function tasksDirIn(text: string): string | null {
  try {
    const dir = (parseYaml(text) as { tasksDir?: unknown } | null)?.tasksDir;
    return typeof dir === 'string' && dir.trim() ? dir.trim().replace(/\/+$/, '') : null;
  } catch {
    return null; // the manifest read reports the YAML error
  }
}

/** Tree and changed paths of every first-parent commit, from one `git log`. */
async function readChanges(repo: string, ref: string): Promise<Map<string, { tree: string; paths: string[] }>> {
  const out = (await git(['log', '--first-parent', '--no-renames', '--name-only', '-z', '--format=%x1e%H %T', ref, '--'], { cwd: repo })).stdout;
  const changes = new Map<string, { tree: string; paths: string[] }>();
  for (const chunk of out.split('\x1e')) {
    if (chunk === '') continue;
    const [header = '', ...names] = chunk.split('\0');
    const [commit = '', tree = ''] = header.split(' ');
    // -z puts the file list after a newline that follows the header's NUL.
    changes.set(commit, { tree, paths: names.map((n) => n.replace(/^\n/, '')).filter(Boolean) });
  }
  return changes;
}
