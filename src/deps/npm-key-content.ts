/**
 * What of an npm file decides the dependency set it installs. A package.json also holds what no
 * install reads (its version, description, the test script), and a release bumps the version in
 * package.json and package-lock.json alike: keying on whole files reinstalled every set on every
 * release. Pure.
 */

/** Fields of package.json an install reads: the dependencies, how they resolve, and the root's own install scripts. */
const INSTALL_FIELDS = [
  'dependencies',
  'devDependencies',
  'optionalDependencies',
  'peerDependencies',
  'peerDependenciesMeta',
  'bundleDependencies',
  'bundledDependencies',
  'overrides',
  'resolutions',
  'workspaces',
  'packageManager',
  'engines',
  'os',
  'cpu',
] as const;

/** The root package's scripts that `npm install` and `npm ci` run. */
const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall', 'prepublish', 'preprepare', 'prepare', 'postprepare'] as const;

const LOCKFILES = new Set(['package-lock.json', 'npm-shrinkwrap.json']);

/**
 * The bytes a dependency file contributes to the key: for package.json its install fields, for an
 * npm lockfile everything but the root package's version; any other file (or one that is not a
 * JSON object) as it is.
 */
export function depsKeyContent(path: string, content: Buffer): Buffer {
  const name = path.split('/').pop() ?? path;
  if (name !== 'package.json' && !LOCKFILES.has(name)) return content;
  let parsed: unknown;
  try {
    parsed = JSON.parse(content.toString('utf8'));
  } catch {
    return content;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return content;
  const doc = parsed as Record<string, unknown>;
  const kept = name === 'package.json' ? installFieldsOf(doc) : withoutRootVersion(doc);
  return Buffer.from(`npm:${canonicalJson(kept)}`, 'utf8');
}

function installFieldsOf(pkg: Record<string, unknown>): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const field of INSTALL_FIELDS) if (field in pkg) kept[field] = pkg[field];
  const scripts = pkg.scripts;
  if (typeof scripts === 'object' && scripts !== null) {
    const own = Object.fromEntries(INSTALL_SCRIPTS.filter((s) => s in scripts).map((s) => [s, (scripts as Record<string, unknown>)[s]]));
    if (Object.keys(own).length > 0) kept.scripts = own;
  }
  return kept;
}

function withoutRootVersion(lock: Record<string, unknown>): Record<string, unknown> {
  const { version: _version, ...rest } = lock;
  const packages = rest.packages;
  if (typeof packages === 'object' && packages !== null && '' in packages) {
    const root = (packages as Record<string, unknown>)[''];
    if (typeof root === 'object' && root !== null) {
      const { version: _rootVersion, ...rootRest } = root as Record<string, unknown>;
      rest.packages = { ...(packages as Record<string, unknown>), '': rootRest };
    }
  }
  return rest;
}

/** JSON with every object's keys sorted: the same document whatever order its fields were written in. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
