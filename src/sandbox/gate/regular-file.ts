import { constants } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';

/**
 * Opens `path` for reading only if it is a regular file, and never waits to do it: the open
 * neither follows a link in the last component nor blocks (a FIFO opened for reading waits for a
 * writer, for good, and a device may hold the reader as long), and the file is judged by `fstat`
 * of what was opened, so nothing can be swapped in between a check and the open. For files an
 * agent or the code under test may have made: a report, a handoff note.
 * @returns the open handle (the caller closes it), or null when the path is missing, a link, or
 *   anything but a regular file.
 */
export async function openRegularFile(path: string): Promise<FileHandle | null> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch(() => null);
  if (!handle) return null;
  const info = await handle.stat().catch(() => null);
  if (info?.isFile()) return handle;
  await handle.close();
  return null;
}

/** The text of `path` when it is a regular file (see {@link openRegularFile}), else null. */
export async function readRegularFile(path: string): Promise<string | null> {
  const handle = await openRegularFile(path);
  if (!handle) return null;
  try {
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}
