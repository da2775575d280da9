import { z } from 'zod';
import type { ToolCall, ToolSpec } from './chat/wire.js';
import { editTextFile, listFiles, readTextFile, searchFiles, writeTextFile } from './file-tools.js';
import { ToolError } from './workspace-paths.js';

/** What the tools act on; `runCommand` runs in the agent sandbox with the configured limits. */
export interface ToolContext {
  workspace: string;
  runCommand(command: string, timeoutSec: number | undefined): Promise<string>;
}

/** What a tool call came to: the text answered to the model, and how the call counts. */
export interface ToolOutcome {
  content: string;
  /** The call itself was broken: arguments not JSON, an unknown tool, arguments not fitting its schema. */
  malformed: boolean;
  /** The tool refused or failed (a path outside the workspace, a file that does not exist). */
  failed: boolean;
  /** Set by `finish`: the agent's summary of its work. */
  finished?: string;
}

const path = z.string().describe('a path relative to the workspace root');
const schemas = {
  list_files: z.object({ path: path.optional(), recursive: z.boolean().optional().describe('list subdirectories too (default false)') }),
  read_file: z.object({
    path,
    offset: z.number().int().min(1).optional().describe('first line to read, from 1'),
    limit: z.number().int().min(1).optional().describe('number of lines to read'),
  }),
  search: z.object({ pattern: z.string().min(1).describe('a JavaScript regular expression, matched line by line'), path: path.optional() }),
  write_file: z.object({ path, content: z.string().describe('the whole new content of the file') }),
  edit_file: z.object({
    path,
    old_text: z.string().describe('text that occurs exactly once in the file'),
    new_text: z.string().describe('its replacement'),
    replace_all: z.boolean().optional().describe('replace every occurrence'),
  }),
  run_command: z.object({
    command: z.string().min(1).describe('a shell command, run with /bin/sh -c in the workspace root'),
    timeout_sec: z.number().int().min(1).optional().describe('time limit; at most the configured one'),
  }),
  finish: z.object({ summary: z.string().describe('what you changed and why, in a few lines') }),
};
type ToolName = keyof typeof schemas;

const descriptions: Record<ToolName, string> = {
  list_files: 'List the files and directories under a directory of the workspace (.git and node_modules are skipped).',
  read_file: 'Read a text file of the workspace, whole or a window of lines.',
  search: 'Search the files of the workspace for lines matching a regular expression; answers path:line: text.',
  write_file: 'Create a file or replace its whole content.',
  edit_file: 'Replace an exact piece of text in a file; old_text must occur exactly once unless replace_all is set.',
  run_command: 'Run a shell command in the workspace root (tests, builds, git diff) and get its exit code and output.',
  finish: 'Say you are done, with a summary. Call it once your change is complete and the tests pass.',
};

/** The tools as the Chat Completions `tools` parameter describes them. */
export const TOOL_SPECS: ToolSpec[] = (Object.keys(schemas) as ToolName[]).map((name) => {
  const { $schema: _drop, ...parameters } = z.toJSONSchema(schemas[name]) as Record<string, unknown>;
  return { type: 'function', function: { name, description: descriptions[name], parameters } };
});

/**
 * Carries out one tool call. Never throws for anything the model did: a broken call is answered
 * with an error the model can act on (and counted as malformed), a refused one with the reason.
 */
export async function callTool(call: ToolCall, context: ToolContext): Promise<ToolOutcome> {
  const name = call.function?.name;
  if (!name || !(name in schemas)) {
    return { content: `error: there is no tool named "${name ?? ''}"; the tools are ${Object.keys(schemas).join(', ')}`, malformed: true, failed: true };
  }
  let raw: unknown;
  try {
    raw = call.function.arguments?.trim() ? JSON.parse(call.function.arguments) : {};
  } catch (error) {
    return { content: `error: the arguments of ${name} are not valid JSON (${(error as Error).message}); send a JSON object`, malformed: true, failed: true };
  }
  const parsed = schemas[name as ToolName].safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(arguments)'}: ${i.message}`).join('; ');
    return { content: `error: wrong arguments for ${name}: ${problems}`, malformed: true, failed: true };
  }
  if (name === 'finish') return { ...ok('finished'), finished: (parsed.data as z.output<typeof schemas.finish>).summary };
  try {
    const handler = handlers[name as Exclude<ToolName, 'finish'>] as (args: unknown, context: ToolContext) => Promise<string>;
    return ok(await handler(parsed.data, context));
  } catch (error) {
    if (error instanceof ToolError) return { content: `error: ${error.message}`, malformed: false, failed: true };
    throw error;
  }
}

const handlers: { [K in Exclude<ToolName, 'finish'>]: (args: z.output<(typeof schemas)[K]>, context: ToolContext) => Promise<string> } = {
  list_files: (args, c) => listFiles(c.workspace, args),
  read_file: (args, c) => readTextFile(c.workspace, args),
  search: (args, c) => searchFiles(c.workspace, args),
  write_file: (args, c) => writeTextFile(c.workspace, args),
  edit_file: (args, c) => editTextFile(c.workspace, args),
  run_command: (args, c) => c.runCommand(args.command, args.timeout_sec),
};

function ok(content: string): ToolOutcome {
  return { content, malformed: false, failed: false };
}
