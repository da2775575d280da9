import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SandboxUser } from '../gate/work-dir.js';

/** The account files an agent sees, each the base it is given with the agent's own user added. */
export interface AgentAccounts {
  /** The launch's directory holding them; removed when the launch is disposed of. */
  dir: string;
  /** The files written, by name (`passwd`, `group`), to bind over `/etc/<name>`. */
  files: Array<{ name: 'passwd' | 'group'; path: string }>;
}

/**
 * An /etc/passwd and /etc/group naming the leased uid `agent`, HOME its home: a CLI looks its user
 * up (os.userInfo, getpwuid, git's default identity, npm), and a leased uid is in no file the
 * system has. `base` gives each file's lines to keep, or null for a file to leave alone.
 */
export async function writeAgentAccounts(user: SandboxUser, home: string, base: (name: 'passwd' | 'group') => Promise<string | null>): Promise<AgentAccounts> {
  const dir = await mkdtemp(join(tmpdir(), 'genesis-agent-etc-'));
  const files: AgentAccounts['files'] = [];
  for (const [name, line] of [
    ['passwd', `agent:x:${user.uid}:${user.gid}:agent:${home}:/bin/sh`],
    ['group', `agent:x:${user.gid}:`],
  ] as const) {
    const kept = await base(name);
    if (kept === null) continue;
    const path = join(dir, name);
    await writeFile(path, `${kept}${kept.endsWith('\n') || kept === '' ? '' : '\n'}${line}\n`, { mode: 0o644 });
    files.push({ name, path });
  }
  return { dir, files };
}
