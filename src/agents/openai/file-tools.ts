import { constants } from 'node:fs';
import { mkdir, open, readdir, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { LineMatcher } from './line-matcher.js';
import { ToolError, resolveInWorkspace, workspaceRelative } from './workspace-paths.js';

/** Limits that keep one tool result from flooding the model's context. */
export const FILE_TOOL_LIMITS = {
  readChars: 64_000,
  listEntries: 1_000,
  searchMatches: 200,
  lineChars: 300,
  searchFileBytes: 1_000_000,
  /** How long one search may run the model's expression, all files together. */
  searchMs: 10_000,
  fileBytes: 16_000_000,
};
/** Directories no listing or search descends into: large, generated, or git's own. */
const SKIPPED = new Set(['.git', 'node_modules']);

/** `list_files`: the files under a directory of the workspace, one per line, directories ending in "/". */
export async function listFiles(workspace: string, args: { path?: string; recursive?: boolean }): Promise<string> {
  const dir = await resolveInWorkspace(workspace, args.path ?? '.', 'read');
  if (!(await stat(dir).catch(() => null))?.isDirectory()) throw new ToolError(`${args.path} is not a directory`);
  const root = await resolveInWorkspace(workspace, '.', 'read');
  const out: string[] = [];
  for await (const entry of walk(dir, args.recursive ?? false)) {
    if (out.length >= FILE_TOOL_LIMITS.listEntries) {
      out.push(`… (more than ${FILE_TOOL_LIMITS.listEntries} entries; list a subdirectory)`);
      break;
    }
    out.push(workspaceRelative(root, entry.path) + (entry.dir ? '/' : ''));
  }
  return out.length > 0 ? out.join('\n') : '(empty directory)';
}

/** `read_file`: a file's text, or a window of its lines. */
export async function readTextFile(workspace: string, args: { path: string; offset?: number; limit?: number }): Promise<string> {
  const file = await resolveInWorkspace(workspace, args.path, 'read');
  const text = await readRegularFile(file, args.path);
  let body = text;
  if (args.offset !== undefined || args.limit !== undefined) {
    const lines = text.split('\n');
    const from = Math.max(1, args.offset ?? 1);
    body = lines.slice(from - 1, args.limit === undefined ? undefined : from - 1 + args.limit).join('\n');
  }
  if (body.length <= FILE_TOOL_LIMITS.readChars) return body;
  return `${body.slice(0, FILE_TOOL_LIMITS.readChars)}\n… (${body.length - FILE_TOOL_LIMITS.readChars} more characters; read a window with offset and limit)`;
}

/**
 * `search`: lines matching a regular expression, as `path:line: text`. The expression runs on a
 * thread of its own under `deadlineMs` for the whole search (see LineMatcher).
 */
export async function searchFiles(
  workspace: string,
  args: { pattern: string; path?: string },
  deadlineMs: number = FILE_TOOL_LIMITS.searchMs,
): Promise<string> {
  const start = await resolveInWorkspace(workspace, args.path ?? '.', 'read');
  const root = await resolveInWorkspace(workspace, '.', 'read');
  const info = await stat(start).catch(() => null);
  if (!info) throw new ToolError(`${args.path} does not exist`);
  const files = info.isDirectory() ? walk(start, true) : single(start);
  const matches: string[] = [];
  const matcher = new LineMatcher(args.pattern, FILE_TOOL_LIMITS.searchMatches + 1, deadlineMs);
  try {
    for await (const entry of files) {
      if (entry.dir || entry.size > FILE_TOOL_LIMITS.searchFileBytes) continue;
      const text = await readRegularFile(entry.path, entry.path).catch(() => '');
      if (text.includes('\u0000')) continue; // binary
      const hits = await matcher.match(text);
      if (hits.length === 0) continue;
      const lines = text.split('\n');
      for (const i of hits) {
        if (matches.length >= FILE_TOOL_LIMITS.searchMatches)
          return `${matches.join('\n')}\n… (more than ${FILE_TOOL_LIMITS.searchMatches} matches; narrow the pattern or the path)`;
        matches.push(`${workspaceRelative(root, entry.path)}:${i + 1}: ${lines[i]!.slice(0, FILE_TOOL_LIMITS.lineChars)}`);
      }
    }
  } finally {
    await matcher.close();
  }
  return matches.length > 0 ? matches.join('\n') : 'no matches';
}

/** `write_file`: creates or replaces a file, and the directories on its way. */
export async function writeTextFile(workspace: string, args: { path: string; content: string }): Promise<string> {
  const file = await resolveInWorkspace(workspace, args.path, 'write');
  if ((await stat(file).catch(() => null))?.isDirectory()) throw new ToolError(`${args.path} is a directory`);
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, args.content);
  return `wrote ${args.path} (${Buffer.byteLength(args.content)} bytes)`;
}

/** `edit_file`: replaces one exact occurrence of `old_text` (or all of them, when asked). */
export async function editTextFile(workspace: string, args: { path: string; old_text: string; new_text: string; replace_all?: boolean }): Promise<string> {
  if (args.old_text === '') throw new ToolError('old_text is empty; use write_file to create a file');
  const file = await resolveInWorkspace(workspace, args.path, 'write');
  const text = await readRegularFile(file, args.path).catch((error: unknown) => {
    if (error instanceof ToolError && !error.message.endsWith('does not exist')) throw error;
    throw new ToolError(`${args.path} does not exist; use write_file to create it`);
  });
  const count = text.split(args.old_text).length - 1;
  if (count === 0) throw new ToolError(`old_text does not occur in ${args.path}; read the file and copy the text exactly`);
  if (count > 1 && !args.replace_all) throw new ToolError(`old_text occurs ${count} times in ${args.path}; add context to make it unique, or set replace_all`);
  await writeFile(file, args.replace_all ? text.split(args.old_text).join(args.new_text) : text.replace(args.old_text, () => args.new_text));
  return `edited ${args.path} (${args.replace_all ? count : 1} replacement${count > 1 && args.replace_all ? 's' : ''})`;
}

/**
 * A file's text, opened without blocking and read only when it is a regular file: a FIFO or a
 * device the agent made would otherwise hold the tool (and the program) until the episode's end.
 */
async function readRegularFile(file: string, shown: string): Promise<string> {
  const handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY).catch((error: NodeJS.ErrnoException) => {
    throw new ToolError(error.code === 'ENOENT' ? `${shown} does not exist` : `cannot read ${shown}: ${error.message}`);
  });
  try {
    const info = await handle.stat();
    if (info.isDirectory()) throw new ToolError(`${shown} is a directory; use list_files`);
    if (!info.isFile()) throw new ToolError(`${shown} is not a regular file (a pipe, socket or device); it is not read`);
    if (info.size > FILE_TOOL_LIMITS.fileBytes) throw new ToolError(`${shown} is ${info.size} bytes, more than the ${FILE_TOOL_LIMITS.fileBytes} a tool reads`);
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}

interface Entry {
  path: string;
  dir: boolean;
  size: number;
}

async function* single(path: string): AsyncGenerator<Entry> {
  yield { path, dir: false, size: (await stat(path)).size };
}

/** Entries in name order; symlinks are listed but never followed (they may lead outside). */
async function* walk(dir: string, recursive: boolean): AsyncGenerator<Entry> {
  const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (SKIPPED.has(entry.name)) continue;
      yield { path, dir: true, size: 0 };
      if (recursive) yield* walk(path, true);
    } else if (entry.isFile()) {
      yield { path, dir: false, size: (await stat(path)).size };
    } else if (entry.isSymbolicLink()) {
      yield { path, dir: false, size: Infinity };
    }
  }
}
