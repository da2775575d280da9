import { matchesAny } from '../manifest/path-patterns.js';
import type { WorldManifest } from '../manifest/schema.js';
import { short, violation, type AuditFinding } from './audit-finding.js';
import type { AuditedCommit } from './read-history.js';

const SHOWN = 3;

/**
 * What each episode's commit changed, against the rules of the head it landed on (its parent's
 * manifest, as the gate read them): nothing protected, nothing outside its task's paths. The gate
 * enforces both before anything lands; finding either here means something wrote the branch
 * around the gate. Pure; `commits` newest first, as the history is read.
 */
export function checkChangesAgainstRules(commits: readonly AuditedCommit[], manifests: ReadonlyMap<string, WorldManifest | string[]>): AuditFinding[] {
  const findings: AuditFinding[] = [];
  const reported = new Set<string>();
  commits.forEach((c, i) => {
    const own = c.manifestKey ? manifests.get(c.manifestKey) : undefined;
    if (own !== undefined && !Array.isArray(own)) {
      checkEpisodeCommit(c, commits[i + 1], manifests, findings);
      return;
    }
    // Every commit must carry a valid manifest: a run reads its rules from the head. Once per manifest.
    const key = c.manifestKey ?? 'missing';
    if (reported.has(key)) return;
    reported.add(key);
    const why = own === undefined ? 'has no world.yaml' : `has a world.yaml that does not parse (${own.slice(0, 2).join('; ')})`;
    findings.push(
      violation('manifest-unreadable', `commit ${short(c.commit)} ${why}`, { commit: c.commit, hint: 'no run can read its rules from such a head' }),
    );
  });
  return findings;
}

function checkEpisodeCommit(
  c: AuditedCommit,
  parent: AuditedCommit | undefined,
  manifests: ReadonlyMap<string, WorldManifest | string[]>,
  findings: AuditFinding[],
): void {
  if (!c.episode || !parent?.manifestKey) return;
  const rules = manifests.get(parent.manifestKey);
  if (rules === undefined || Array.isArray(rules)) return; // reported on the parent itself
  const where = { commit: c.commit, episode: c.episode };
  const touched = c.changed.filter((p) => matchesAny(p, rules.protected));
  if (touched.length > 0) {
    findings.push(violation('protected-path-changed', `commit ${short(c.commit)} (episode ${c.episode}) changed protected ${listFew(touched)}`, where));
  }
  const task = rules.tasks.find((t) => t.id === c.task);
  // The handoff file is every episode's to append to, whatever its task (as the pre-gate allows).
  const allowed = task ? [...task.paths, ...(rules.goal.progressFile ? [rules.goal.progressFile] : [])] : [];
  const outside = task ? c.changed.filter((p) => !matchesAny(p, allowed)) : [];
  if (outside.length > 0) {
    findings.push(
      violation(
        'outside-task-paths',
        `commit ${short(c.commit)} (episode ${c.episode}, task ${c.task}) changed ${listFew(outside)} outside the task's paths (${allowed.join(', ')})`,
        where,
      ),
    );
  }
}

function listFew(paths: readonly string[]): string {
  const shown = paths
    .slice(0, SHOWN)
    .map((p) => JSON.stringify(p))
    .join(', ');
  return paths.length > SHOWN ? `${shown} and ${paths.length - SHOWN} more` : shown;
}
