import { existsSync, rmSync } from 'node:fs';
import { chmod, mkdtemp, realpath } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dependencyDirsOutside } from '../../sandbox/agent/package-dependencies.js';

/** How to start the `openai` agent's program, and what of Genesis's own install it reads. */
export interface AgentProgram {
  /** After the node binary: the program's entry. */
  args: string[];
  /** Paths of Genesis's install the sandbox shows read-only at their own place: its code and dependencies, never a world. */
  readOnly: string[];
}

/** The part of esbuild's API used here (esbuild comes with tsx, which a checkout runs Genesis with). */
interface Bundler {
  build(options: Record<string, unknown>): Promise<unknown>;
}

let made: Promise<AgentProgram> | null = null;

/**
 * The program as this install runs it, made once per process. In an installed package, the
 * compiled `dist/agents/openai/program/main.js`, with the package's package.json, dist/ and the
 * node_modules its dependencies are in bound read-only. In a checkout (this module is TypeScript,
 * run through tsx as bin/genesis.js does), the source bundled into one file by the esbuild that
 * tsx brings, in a directory of this process's own: the sandbox then binds that one file, and
 * the program starts in a fraction of the time tsx's loader takes.
 */
export function agentProgram(): Promise<AgentProgram> {
  made ??= makeAgentProgram(import.meta.url);
  made.catch(() => {
    made = null;
  });
  return made;
}

async function makeAgentProgram(moduleUrl: string): Promise<AgentProgram> {
  const entry = fileURLToPath(new URL(`./program/main.${moduleUrl.endsWith('.ts') ? 'ts' : 'js'}`, moduleUrl));
  if (moduleUrl.endsWith('.ts')) return bundled(entry, moduleUrl);
  const root = fileURLToPath(new URL('../../../', moduleUrl)).replace(/\/$/, '');
  const paths = [join(root, 'package.json'), join(root, 'dist')];
  const modules = join(root, 'node_modules');
  if (existsSync(modules)) paths.push(modules, await realpath(modules));
  paths.push(...(await dependencyDirsOutside(root)));
  return { args: [entry], readOnly: [...new Set(paths)] };
}

async function bundled(entry: string, moduleUrl: string): Promise<AgentProgram> {
  const require = createRequire(moduleUrl);
  const esbuild = createRequire(require.resolve('tsx'))('esbuild') as Bundler;
  const dir = await mkdtemp(join(tmpdir(), 'genesis-openai-agent-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  // Readable by the uid an agent sandbox runs as; writable by this process alone.
  await chmod(dir, 0o755);
  const outfile = join(dir, 'openai-agent.mjs');
  await esbuild.build({ entryPoints: [entry], outfile, bundle: true, platform: 'node', format: 'esm', target: 'node20', logLevel: 'silent' });
  return { args: [outfile], readOnly: [outfile] };
}
