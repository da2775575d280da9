import { createAgentSandbox } from '../../../sandbox/create-agent-sandbox.js';
import { createSandbox } from '../../../sandbox/create-sandbox.js';
import { readManifest } from '../../../manifest/parse.js';

/** What a worker found it can run when it started. */
export interface WorkerPreflight {
  /** Gate sandboxes that passed their probe (docker with the default image, bubblewrap). */
  sandboxes: string[];
  /** The default agent sandbox (`agent.sandbox: auto`) when it passed its probe, else null. */
  agentSandbox: string | null;
  ms: number;
}

/** The defaults a world gets when its manifest says nothing of sandboxes. */
const DEFAULTS =
  "name: preflight\ngoal: { outcome: none }\nverify: { test: 'true' }\nagent: { kind: command, command: ['true'] }\ntasks: [{ id: t1, title: t1, paths: [t1] }]\n";

/**
 * What `genesis worker` checks as it starts, before it says it is ready: the gate sandboxes this
 * machine can run and the default agent sandbox, with the very probes its jobs make (kept by this
 * process: createSandbox, createAgentSandbox), and the manifest parser a job uses first. A job then
 * starts at once: a fresh worker whose first job made these probes took several times as long from
 * taking the job to its workspace as a later job did (bench/RESULTS.md, Scaling).
 * Nothing here is required: a world that needs a sandbox that failed is told so by its job.
 */
export async function preflightWorker(): Promise<WorkerPreflight> {
  const t0 = performance.now();
  const manifest = readManifest(DEFAULTS, 'the default manifest');
  const image = manifest.verify.image;
  const passed = <T>(made: Promise<T>, name: (made: T) => string) =>
    made.then(
      (value) => name(value),
      () => null,
    );
  const [docker, bwrap, agent] = await Promise.all([
    passed(createSandbox('docker', { image }), () => 'docker'),
    passed(createSandbox('bwrap', { image }), () => 'bwrap'),
    passed(createAgentSandbox({ kind: manifest.agent.sandbox, image: manifest.agent.image ?? image, network: manifest.agent.network }), (s) => s.kind),
  ]);
  return { sandboxes: [docker, bwrap].filter((k) => k !== null), agentSandbox: agent, ms: Math.round(performance.now() - t0) };
}
