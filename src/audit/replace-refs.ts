import { git } from '../git/git.js';
import { violation, type AuditFinding } from './audit-finding.js';

/**
 * `refs/replace/*` make git read one object's content under another's name. Genesis runs git with
 * GIT_NO_REPLACE_OBJECTS=1, so they change nothing it verifies; but only someone who meant a
 * protected file to read differently writes one into a world, so each is reported.
 */
export async function checkReplaceRefs(repo: string): Promise<AuditFinding[]> {
  const out = (await git(['for-each-ref', '--format=%(refname) %(objectname)', 'refs/replace/'], { cwd: repo })).stdout;
  return out
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [ref = '', target = ''] = line.split(' ');
      const replaced = ref.slice('refs/replace/'.length);
      return violation(
        'replace-ref',
        `${ref} makes object ${replaced.slice(0, 12)} read as ${target.slice(0, 12)}; git outside Genesis would show the replaced content`,
        {
          hint: `nobody but an agent or a person working around the gate writes these: inspect it, then delete it with git update-ref -d ${ref}`,
        },
      );
    });
}
