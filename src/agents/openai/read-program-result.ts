import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { programResultSchema, type ProgramResult } from './program/program-result.js';

/** The most of the program's result file read: a few numbers and two messages. */
const RESULT_BYTES = 64 * 1024;
/** The most of a transcript kept for the ledger; a longer one is dropped, not cut (it would not parse). */
export const TRANSCRIPT_BYTES = 8 * 1024 * 1024;

/**
 * A file the agent's program left, read as Genesis reads anything in reach of the agent: opened
 * without following a link and without blocking (a FIFO in its place cannot hold Genesis), read
 * only when it is a regular file, and at most `maxBytes` (null when it is larger, missing or not
 * a regular file).
 */
export async function readLeftFile(path: string, maxBytes: number): Promise<string | null> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY).catch(() => null);
  if (!handle) return null;
  try {
    const info = await handle.stat();
    if (!info.isFile() || info.size > maxBytes) return null;
    const buffer = Buffer.alloc(maxBytes + 1);
    const { bytesRead } = await handle.read(buffer, 0, maxBytes + 1, 0);
    // Grown since the stat: not the file that was measured.
    if (bytesRead > maxBytes) return null;
    return buffer.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}

/** The program's outcome, or null when it left none that is whole and well-formed. */
export async function readProgramResult(path: string): Promise<ProgramResult | null> {
  const text = await readLeftFile(path, RESULT_BYTES);
  if (text === null) return null;
  try {
    const parsed = programResultSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
