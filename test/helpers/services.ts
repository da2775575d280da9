import { execFileSync } from 'node:child_process';
import { it } from 'vitest';

/**
 * Docker and bubblewrap are real in these tests. A developer without them may skip those tests
 * only on purpose, by setting GENESIS_ALLOW_SKIP=docker,bwrap (or =all); CI never sets it, so
 * there a missing service fails the test instead of skipping it.
 */
function allowedToSkip(service: string): boolean {
  const allowed = (process.env.GENESIS_ALLOW_SKIP ?? '').split(',').map((s) => s.trim());
  return !process.env.CI && (allowed.includes(service) || allowed.includes('all'));
}

function answers(cmd: string, args: string[]): boolean {
  try {
    execFileSync(cmd, args, { stdio: 'ignore', timeout: 10_000 });
    return true;
  } catch {
    return false;
  }
}

export const dockerAnswers = (): boolean => answers('docker', ['version']);
export const bwrapAnswers = (): boolean => answers('bwrap', ['--ro-bind', '/', '/', 'true']);

/** `it`, skipped only when the service is missing and skipping it was asked for. */
export function itWith(service: 'docker' | 'bwrap' | 'redis'): typeof it {
  const up = service === 'docker' ? dockerAnswers() : service === 'bwrap' ? bwrapAnswers() : answers('redis-cli', ['ping']);
  return !up && allowedToSkip(service) ? (it.skip as typeof it) : it;
}
