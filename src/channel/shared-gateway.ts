import { ModelGateway } from './model-gateway.js';

let shared: ModelGateway | null = null;

/**
 * The gateway of this process: every episode the process runs (a run in one process, or a
 * worker's jobs) opens its channel on it, so a usage-limit hold one episode meets holds the
 * others on the same credential. Made on first use; it holds no listener of its own.
 */
export function sharedModelGateway(): ModelGateway {
  shared ??= new ModelGateway();
  return shared;
}
