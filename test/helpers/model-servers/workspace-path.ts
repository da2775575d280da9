import { isAbsolute, join } from 'node:path';

// How each CLI names its working directory in the system prompt it sends.
const PATTERNS = [
  /(?:Working|Current working) directory: (\/[^\s"\\<]+)/,
  /working in the directory: (\/[^\s"\\<]+)/i,
  /"cwd":\s*"(\/[^"]+)"/,
  /<cwd>(\/[^<]+)<\/cwd>/,
];

/**
 * The absolute path of `file` in the workspace the CLI says it works in (file-writing tools of
 * Claude Code and opencode want absolute paths), or `file` itself when no request names one.
 */
export function workspacePath(requestBody: string, file: string): string {
  if (isAbsolute(file)) return file;
  for (const pattern of PATTERNS) {
    const m = pattern.exec(requestBody);
    if (m?.[1]) return join(m[1].replace(/[.,;:]+$/, ''), file);
  }
  return file;
}
