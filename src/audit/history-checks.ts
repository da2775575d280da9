import { short, violation, warning, type AuditFinding } from './audit-finding.js';
import type { AuditedCommit } from './read-history.js';

/**
 * Besides the integrator, only `genesis task add` (a commit with a Genesis-Verified trailer that
 * changes world.yaml alone) and `genesis amend` (Genesis-Amend and Genesis-Verified trailers, any
 * change: a person's) write the branch. Anything else without a Genesis-Episode trailer came from
 * outside. Whether such a tree really passes its gate is what `--reverify` checks.
 */
function unattributedProblem(c: AuditedCommit): string | null {
  if (c.verified === null) return 'has no Genesis-Episode or Genesis-Verified trailer';
  if (c.amend) return null;
  const others = c.changed.filter((p) => p !== 'world.yaml');
  if (others.length > 0)
    return `has no Genesis-Episode trailer and changes ${others
      .slice(0, 3)
      .map((p) => JSON.stringify(p))
      .join(', ')}${others.length > 3 ? ' and more' : ''}, not only world.yaml`;
  return null;
}

/**
 * The shape of the accepted history, from the commits alone: linear (no merge on the first-parent
 * line), every commit but the first brought by an episode (whose Genesis-Episode trailer the
 * integrator writes) or by `genesis task add`, and no episode landed twice. In an adopted world
 * the first accepted commit stands for the root (readAuditedHistory leaves the history under it
 * out). Pure.
 */
export function checkHistoryShape(commits: readonly AuditedCommit[]): AuditFinding[] {
  const findings: AuditFinding[] = [];
  const byEpisode = new Map<string, string[]>();
  for (const c of commits) {
    // An adopted repository's head may be its own merge: it is history, verified once at adoption.
    if (c.parents.length > 1 && !c.adopted) {
      findings.push(
        violation('merge-commit', `commit ${short(c.commit)} is a merge of ${c.parents.map(short).join(' and ')}; the accepted history must be linear`, {
          commit: c.commit,
          hint: 'the integrator never merges; someone pushed to the branch by hand',
        }),
      );
    }
    const unattributed = c.parents.length > 0 && c.episode === null && !c.adopted ? unattributedProblem(c) : null;
    if (unattributed) {
      findings.push(
        violation('unattributed-commit', `commit ${short(c.commit)} ("${c.subject}") ${unattributed}: it did not come through the gate`, {
          commit: c.commit,
          hint: 'only genesis moves the accepted branch; find who pushed this commit (server logs, git reflog). A person changes the world with genesis amend',
        }),
      );
    }
    if (c.separator) {
      findings.push(
        violation(
          'message-separator',
          `commit ${short(c.commit)} (${JSON.stringify(c.subject)}) has a control character in its message, which Genesis never writes`,
          {
            commit: c.commit,
            hint: 'a separator in a message is how trailers get forged: the commit came from outside Genesis, or from a version before titles were checked',
          },
        ),
      );
    }
    if (c.episode) byEpisode.set(c.episode, [...(byEpisode.get(c.episode) ?? []), c.commit]);
  }
  for (const [episode, landed] of byEpisode) {
    if (landed.length < 2) continue;
    findings.push(
      violation('landed-twice', `episode ${episode} landed ${landed.length} times: ${landed.map(short).join(', ')}`, { episode, commit: landed[0] }),
    );
  }
  for (const [task, landed] of landingsSinceReopen(commits)) {
    if (landed.length < 2) continue;
    // Not broken (a ratchet world improves a task more than once), but a scheduler should not do it.
    findings.push(warning('task-landed-twice', `task ${task} landed ${landed.length} times: ${landed.map(short).join(', ')}`, { commit: landed[0] }));
  }
  return findings;
}

/**
 * Each task's runs of landings (newest first) not separated by a reopening of it: `genesis task reopen`
 * is how the docs say to have done work done again, so landing once more after it is the point,
 * not a scheduler's slip. Only a reopening that changed no file counts (what the command writes);
 * a commit that carries the trailer and a change excuses nothing.
 */
function landingsSinceReopen(commits: readonly AuditedCommit[]): Array<[string, string[]]> {
  const byTask = new Map<string, string[]>();
  const groups: Array<[string, string[]]> = [];
  for (const c of [...commits].reverse()) {
    if (c.reopen && !c.episode && c.changed.length === 0) byTask.delete(c.reopen);
    if (!c.task) continue;
    let group = byTask.get(c.task);
    if (!group) {
      group = [];
      byTask.set(c.task, group);
      groups.push([c.task, group]);
    }
    group.unshift(c.commit);
  }
  return groups;
}
