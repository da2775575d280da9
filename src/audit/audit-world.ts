import { GenesisError } from '../errors/genesis-error.js';
import type { Sandbox } from '../sandbox/sandbox.js';
import type { EpisodeRecord } from '../ledger/episode-record.js';
import type { WorldManifest } from '../manifest/schema.js';
import type { WorldRepo } from '../world/world-repo.js';
import { short, violation, type AuditFinding } from './audit-finding.js';
import { checkChangesAgainstRules } from './change-checks.js';
import { checkHistoryShape } from './history-checks.js';
import { checkCommitsAgainstLedger, checkLedgerOutcomes } from './ledger-checks.js';
import { readAuditedHistory, type AuditedCommit } from './read-history.js';
import { readCandidateTrees, readLedgerEntries } from './read-ledger.js';
import { checkReplaceRefs } from './replace-refs.js';
import { reverifyCommits } from './reverify-commits.js';
import { sampleItems } from './sample-commits.js';
import { imageIdOfSummary } from '../gate/image.js';

export interface AuditOptions {
  world: WorldRepo;
  /** Verify again a seeded random sample of this many accepted commits; 0 verifies none. @default every commit */
  sample?: number;
  /** Seed of the sample. @default 1 */
  seed?: number;
  /**
   * Where the trees are verified again: a sandbox, or a factory given the head manifest, called
   * only when there is something to verify (the CLI builds it from `--sandbox` or verify.sandbox).
   * Required unless `sample` is 0.
   */
  sandbox?: Sandbox | ((manifest: WorldManifest) => Promise<Sandbox>);
  /** Gates run at once while verifying again. @default 1 */
  jobs?: number;
  /** Who runs the world now (see findRunHolder), or null: decides whether running episodes are a warning. @default null */
  runHolder?: string | null;
  /** Called after each commit verified again. */
  onVerified?: (commit: AuditedCommit, ok: boolean) => void;
}

/** What an audit found, in the shape `genesis audit --json` prints. */
export interface AuditReport {
  world: string;
  branch: string;
  head: string;
  /** Accepted commits on the branch (in an adopted world, from the adoption on). */
  commits: number;
  /** An adopted world's first accepted commit, where it came from, and the commits of the repository's own history under it (not audited). */
  adoption: { commit: string; source: string | null; historyCommits: number } | null;
  /** Ledger records. */
  episodes: number;
  /** Episodes recorded as still running. */
  running: number;
  runHolder: string | null;
  /** How many commits were verified again, which, and how they were picked. */
  reverified: { commits: number; of: number; seed: number | null; sandbox: string | null; list: string[]; images?: string[] };
  findings: AuditFinding[];
  violations: number;
  warnings: number;
  durationMs: number;
}

/**
 * `genesis audit`: checks a world's invariants from what it holds: a linear accepted history
 * brought only by episodes, each commit matching a final, accepted ledger record with a passing
 * gate and changing only what its task allowed, every ledger record closed, and (for every commit
 * or a seeded sample) each tree passing its gate again in a fresh sandbox. Reads the world and
 * never writes it. The structural checks cost a fixed number of git processes; re-verification
 * costs a gate per commit, which `sample` bounds.
 */
export async function auditWorld(options: AuditOptions): Promise<AuditReport> {
  const started = Date.now();
  const { world } = options;
  const manifest = await world.manifestAt('HEAD');
  const head = await world.head(manifest.branch);
  const [history, entries] = await Promise.all([readAuditedHistory(world, manifest.branch), readLedgerEntries(world.path)]);
  const records = new Map(entries.flatMap((e): Array<[string, EpisodeRecord]> => (e.record ? [[e.id, e.record]] : [])));
  const candidates = [...records.values()].flatMap((r) => (r.outcome === 'accepted' && r.candidate ? [r.candidate] : []));
  const candidateTrees = await readCandidateTrees(world.path, candidates);
  const onBranch = new Set(history.commits.map((c) => c.commit));
  const runHolder = options.runHolder ?? null;

  const findings: AuditFinding[] = [
    ...checkHistoryShape(history.commits),
    ...checkChangesAgainstRules(history.commits, history.manifests),
    ...checkCommitsAgainstLedger(history.commits, records, candidateTrees),
    ...checkLedgerOutcomes(entries, onBranch, runHolder),
    ...(await checkReplaceRefs(world.path)),
    ...(history.adoption && !onBranch.has(history.adoption.commit)
      ? [
          violation(
            'adoption-lost',
            `the adopted commit ${short(history.adoption.commit)} is not on ${manifest.branch}: the branch was rewritten under Genesis`,
            {
              commit: history.adoption.commit,
              hint: 'every commit is judged as Genesis-made now; put the branch back on a line through the adopted commit (git reflog shows where it was)',
            },
          ),
        ]
      : []),
  ];

  const seed = options.seed ?? 1;
  const targets = sampleItems(history.commits, options.sample, seed);
  let sandboxKind: string | null = null;
  let images: string[] = [];
  if (targets.length > 0) {
    if (!options.sandbox) {
      throw new GenesisError('invalid-option', 'auditWorld: verifying commits again needs a sandbox', {
        hint: 'pass options.sandbox, or sample: 0 to verify none',
      });
    }
    const sandbox = typeof options.sandbox === 'function' ? await options.sandbox(manifest) : options.sandbox;
    sandboxKind = sandbox.kind;
    // The trailer names the image of the gate that accepted the commit (a replay's, when replayed); older commits only in the ledger.
    const recordedImage = (c: AuditedCommit) => imageIdOfSummary(c.verified) ?? (c.episode ? (records.get(c.episode)?.gate?.image?.id ?? null) : null);
    const reverified = await reverifyCommits({
      repo: world.path,
      history: history.commits,
      targets,
      manifests: history.manifests,
      sandbox,
      jobs: options.jobs,
      onVerified: options.onVerified,
      recordedImage,
    });
    findings.push(...reverified.findings);
    images = reverified.images;
  }
  const violations = findings.filter((f) => f.severity === 'violation').length;
  return {
    world: world.path,
    branch: manifest.branch,
    head,
    commits: history.commits.length,
    adoption: history.adoption,
    episodes: entries.length,
    running: entries.filter((e) => e.record?.status === 'running').length,
    runHolder,
    reverified: {
      commits: targets.length,
      of: history.commits.length,
      seed: options.sample === undefined ? null : seed,
      sandbox: sandboxKind,
      list: targets.map((c) => c.commit),
      images,
    },
    findings,
    violations,
    warnings: findings.length - violations,
    durationMs: Date.now() - started,
  };
}
