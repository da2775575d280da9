import { existsSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { dependencyDirsOutside } from '../../sandbox/agent/package-dependencies.js';

/** How to start the `openai` agent's program, and what of Genesis's own install it reads. */
export interface AgentProgram {
  /** After the node binary: the program's entry (with tsx's loader first, in a checkout). */
  args: string[];
  /** Variables the program needs to load (tsx's settings in a checkout). */
  env: Record<string, string>;
  /** Paths of Genesis's install the sandbox shows read-only at their own place: its code and dependencies, never a world. */
  readOnly: string[];
}

/**
 * The program as this install runs it. In a checkout (this module is TypeScript, run through tsx
 * as bin/genesis.js does) the entry is the source, loaded with tsx's loader and Genesis's own
 * tsconfig (never the workspace's); in an installed package, the compiled dist/. The sandbox then
 * binds the package's package.json, its src/ or dist/, and its node_modules (by the link's own
 * path too, when node_modules is a link, so Node's lookup from the code finds it), plus the
 * directories a hoisting install put its dependencies in.
 */
export async function agentProgram(moduleUrl = import.meta.url): Promise<AgentProgram> {
  const fromSource = moduleUrl.endsWith('.ts');
  const root = fileURLToPath(new URL('../../../', moduleUrl)).replace(/\/$/, '');
  const entry = fileURLToPath(new URL(`./program/main.${fromSource ? 'ts' : 'js'}`, moduleUrl));
  const paths = [join(root, 'package.json'), join(root, fromSource ? 'src' : 'dist')];
  const modules = join(root, 'node_modules');
  if (existsSync(modules)) paths.push(modules, await realpath(modules));
  paths.push(...(await dependencyDirsOutside(root)));
  if (!fromSource) return { args: [entry], env: {}, readOnly: unique(paths) };
  const tsconfig = join(root, 'tsconfig.json');
  const loader = await realpath(createRequire(moduleUrl).resolve('tsx/esm'));
  return { args: ['--import', pathToFileURL(loader).href, entry], env: { TSX_TSCONFIG_PATH: tsconfig }, readOnly: unique([...paths, tsconfig]) };
}

function unique(paths: readonly string[]): string[] {
  return [...new Set(paths)];
}
