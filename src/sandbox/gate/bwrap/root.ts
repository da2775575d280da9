import { existsSync, lstatSync, readlinkSync, realpathSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { SandboxUser } from '../work-dir.js';

/** Where the work dir is seen inside, as in the docker image. */
export const SANDBOX_WORK_DIR = '/work';

/** The top-level links and dirs of a merged-/usr system, kept as the host has them (a link stays a link). */
const SYSTEM_LINKS = ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

/**
 * The root filesystem a gate sees under bubblewrap: the same skeleton as the docker image
 * (sandboxes/node/build.sh), built from nothing: the host's /usr and /etc/alternatives read-only,
 * the /bin, /lib… links, a synthetic /etc/passwd, /etc/group and /etc/hosts, private /tmp, /proc,
 * /dev, the work dir at /work, and nothing else: no host user database, no /var, /home, /root,
 * /srv, /opt or /run, no path of the world on the host. The root itself is read-only.
 * When the running Node lives outside /usr, its prefix is bound too, read-only, at its own path.
 * `diskMb` bounds /tmp as the quota bounds the work dir.
 */
export async function minimalRootArgs(workDir: string, user: SandboxUser, diskMb?: number): Promise<string[]> {
  const etc = await syntheticEtc(user);
  return [
    ...['--ro-bind', '/usr', '/usr'],
    ...systemLinkArgs(),
    // bwrap would make /etc itself, 0700 and root's: out of the sandbox user's reach.
    ...['--perms', '0755', '--dir', '/etc'],
    ...(existsSync('/etc/alternatives') ? ['--ro-bind', '/etc/alternatives', '/etc/alternatives'] : []),
    ...['passwd', 'group', 'hosts'].flatMap((name) => ['--ro-bind', join(etc, name), `/etc/${name}`]),
    ...nodePrefixArgs(),
    ...['--dev', '/dev', '--proc', '/proc'],
    // A root-run bwrap makes its tmpfs root's; the command's user needs a sticky, writable /tmp.
    // With a disk quota, /tmp gets the same bound: it would otherwise be the way around it.
    ...['--perms', '1777', ...(diskMb === undefined ? [] : ['--size', String(diskMb * 1024 * 1024)]), '--tmpfs', '/tmp'],
    ...['--bind', workDir, SANDBOX_WORK_DIR, '--chdir', SANDBOX_WORK_DIR],
    ...['--remount-ro', '/'],
  ];
}

let linkArgs: string[] | undefined;
function systemLinkArgs(): string[] {
  linkArgs ??= SYSTEM_LINKS.flatMap((path) => {
    const info = lstatSync(path, { throwIfNoEntry: false });
    if (!info) return [];
    return info.isSymbolicLink() ? ['--symlink', readlinkSync(path), path] : ['--ro-bind', path, path];
  });
  return linkArgs;
}

let prefixArgs: string[] | undefined;
function nodePrefixArgs(): string[] {
  if (prefixArgs) return prefixArgs;
  const prefix = dirname(dirname(realpathSync(process.execPath)));
  const outsideUsr = prefix !== '/' && prefix !== '/usr' && !prefix.startsWith('/usr/');
  prefixArgs = outsideUsr ? ['--ro-bind', prefix, prefix] : [];
  return prefixArgs;
}

const made = new Map<string, Promise<string>>();

/**
 * A directory holding the synthetic /etc files for one sandbox user: root, the image's `genesis`
 * (uid 1000) and `sandbox`, the user the command runs as. Written once per user and process.
 */
function syntheticEtc(user: SandboxUser): Promise<string> {
  const key = `${user.uid}:${user.gid}`;
  let dir = made.get(key);
  if (!dir) {
    dir = writeEtc(user);
    made.set(key, dir);
  }
  return dir;
}

let processDir: Promise<string> | undefined;

/** This process's own directory (mkdtemp: nobody else can have made it or put a link there), removed at exit. */
function etcRoot(): Promise<string> {
  processDir ??= mkdtemp(join(tmpdir(), 'genesis-gate-etc-')).then((dir) => {
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    return dir;
  });
  return processDir;
}

async function writeEtc(user: SandboxUser): Promise<string> {
  const dir = join(await etcRoot(), `${user.uid}-${user.gid}`);
  await mkdir(dir, { mode: 0o755 });
  const own = user.uid === 1000 || user.uid === 0 ? '' : `sandbox:x:${user.uid}:${user.gid}:sandbox:/tmp:/bin/sh\n`;
  const ownGroup = user.gid === 1000 || user.gid === 0 ? '' : `sandbox:x:${user.gid}:\n`;
  const files: Record<string, string> = {
    passwd: `root:x:0:0:root:/root:/bin/sh\ngenesis:x:1000:1000:genesis:/tmp:/bin/sh\n${own}`,
    group: `root:x:0:\ngenesis:x:1000:\n${ownGroup}`,
    hosts: '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n',
  };
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text, { mode: 0o644 });
  return dir;
}
