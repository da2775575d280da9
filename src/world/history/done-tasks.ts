/**
 * The tasks done after `commits` (first-parent history, newest first), on top of `base` (what was
 * done before the oldest of them): a task is done when a change for it landed after its latest
 * reopening. Every reader of done tasks goes through here, so a reopened task is pending for all.
 */
export function doneTasksOf(commits: Iterable<{ task?: string | null; reopen?: string | null }>, base: ReadonlySet<string> = new Set()): Set<string> {
  const landed = new Set<string>();
  const reopened = new Set<string>();
  for (const c of commits) {
    if (c.task && !reopened.has(c.task)) landed.add(c.task);
    if (c.reopen && !landed.has(c.reopen)) reopened.add(c.reopen);
  }
  const done = new Set([...base].filter((t) => !reopened.has(t)));
  for (const t of landed) done.add(t);
  return done;
}
