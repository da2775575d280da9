import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const SANDBOXES = join(import.meta.dirname, '..', '..', 'sandboxes');
let built: Promise<void> | undefined;

/**
 * The agent image (genesis/agent:latest, the docker agent sandbox's default: Node, git and the
 * pinned CLIs) as `sandboxes/build-images.sh --agents` makes it, once per test process: up to
 * date in well under a second once built, about a minute the first time (the CLIs from npm). A
 * test whose agents run in it asks for it itself rather than relying on another file, run
 * earlier, to have built it: on a fresh machine the order of files is not the order they were
 * written in.
 */
export function agentImageBuilt(): Promise<void> {
  built ??= promisify(execFile)('bash', [join(SANDBOXES, 'build-images.sh'), '--agents'], { timeout: 900_000 }).then(() => undefined);
  return built;
}
