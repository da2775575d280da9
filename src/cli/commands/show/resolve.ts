import { GenesisError } from '../../../errors/genesis-error.js';
import type { AcceptedCommit } from '../../../world/history/accepted-history.js';
import { commitOrigins, type CommitOrigin } from '../../../world/history/commit-origin.js';
import type { Ledger } from '../../../ledger/ledger.js';
import { git } from '../../../git/git.js';
import type { WorldRepo } from '../../../world/world-repo.js';
import { markControlLines, showControls } from '../../../ledger/terminal-text.js';
import { printJson } from '../../output.js';

/** What `genesis show <ref>` names: an episode, or an accepted commit no episode made (the first commit, an amendment, a task add). */
export type ShowTarget = { kind: 'episode'; id: string } | { kind: 'commit'; commit: AcceptedCommit; made: CommitOrigin };

/**
 * Resolves an episode id, a unique prefix of one, or any revision of an accepted commit (a hash
 * or its prefix, HEAD, main~2). An accepted commit an episode made shows that episode.
 */
export async function resolveShowTarget(world: WorldRepo, ledger: Ledger, ref: string): Promise<ShowTarget> {
  if (await ledger.read(ref)) return { kind: 'episode', id: ref };
  const commit = /^[\w./~^@{}-]+$/.test(ref) && !ref.startsWith('-') ? await world.resolveRef(ref) : null;
  if (commit) {
    const manifest = await world.manifestAt('HEAD');
    const history = await world.acceptedHistory(manifest.branch);
    const at = history.findIndex((c) => c.commit === commit);
    const entry = history[at];
    if (entry?.episode) return { kind: 'episode', id: entry.episode };
    if (entry) return { kind: 'commit', commit: entry, made: commitOrigins(history, await world.adoption())[at]! };
  }
  const ids = (await ledger.readAll()).map((r) => r.id).filter((id) => id.startsWith(ref));
  if (ids.length === 1) return { kind: 'episode', id: ids[0]! };
  if (ids.length > 1) {
    throw new GenesisError('ambiguous-episode', `"${ref}" starts ${ids.length} episode ids: ${ids.slice(0, 5).join(', ')}${ids.length > 5 ? ', …' : ''}`, {
      hint: 'give more of the id',
    });
  }
  throw new GenesisError('episode-not-found', `no episode or accepted commit "${ref}" in this world`, {
    hint: 'list them with genesis episodes or genesis log',
  });
}

/** An accepted commit that no episode made: what made it, its trailers and its change. */
export async function showCommit(
  repo: string,
  target: { commit: AcceptedCommit; made: CommitOrigin },
  how: { json: boolean; diffOnly: boolean },
): Promise<void> {
  const { commit, made: origin } = target;
  const diff = (await git(['show', '--format=', '--stat', '--patch', '--no-color', '--no-renames', commit.commit, '--'], { cwd: repo })).stdout;
  if (how.json) return printJson({ commit, made: origin, diff });
  if (how.diffOnly) return void process.stdout.write(`${markControlLines(diff.trimEnd())}\n`);
  // A reopening's reason is its commit's body: what a person reads to know why the task is pending again.
  const reason = commit.reopen ? (await git(['show', '-s', '--format=%b', commit.commit], { cwd: repo })).stdout.split('\n\n')[0]!.trim() : '';
  const made =
    origin === 'init'
      ? "the world's first commit (genesis init)"
      : origin === 'adopt'
        ? "the world's first accepted commit: the adopted repository's head, verified (genesis init --adopt)"
        : origin === 'history'
          ? "a commit of the adopted repository's own history, from before Genesis (not judged by its gate)"
          : origin === 'reopen'
            ? `a reopening of task ${commit.reopen} (genesis task reopen) by ${commit.amend?.replace(/: reopen task .*$/, '') ?? 'a person'}: ${reason}`
            : origin === 'amend'
              ? `an amendment (genesis amend): ${commit.amend}`
              : origin === 'task-add'
                ? 'a change to world.yaml (genesis task add)'
                : 'made outside Genesis: no trailer says the gate judged it (genesis audit reports it)';
  process.stdout.write(
    `${showControls(`commit ${commit.commit}: ${commit.subject}\n  ${made}; ${commit.date}`)}\n  verified: ${commit.verified ?? '-'}${commit.score === null ? '' : `; score ${commit.score}`}\n\n${markControlLines(diff.trimEnd())}\n`,
  );
}
