import { agentsRunProcesses } from '../../../sandbox/create-agent-sandbox.js';
import { NONE_AGENT_SANDBOX_WARNING } from '../../../sandbox/agent/none-agent-sandbox.js';
import { killOrphanedAgents } from '../../../sandbox/agent/process-tracker.js';
import { createSandbox } from '../../../sandbox/create-sandbox.js';
import { NONE_SANDBOX_WARNING } from '../../../sandbox/gate/none-sandbox.js';
import type { RunSummary } from '../../../schedule/run/ports/events.js';
import { composeClusterRun } from '../../../compose/cluster-run.js';
import { composeEmbeddedRun } from '../../../compose/embedded-run.js';
import { runWorld } from '../../../schedule/run/run-world.js';
import { acquireRunLock } from '../../../world/run-lock.js';
import { putBackForeignHead } from '../../../world/history/put-back-foreign-head.js';
import { CLOSED_PIPE } from '../../closed-pipe.js';
import { withCliName } from '../../invocation.js';
import { finishPushing, syncingVerifications, syncingWithServer, openWorldLocation, startPublishing } from '../../world-location.js';
import { resolveSandboxChoice } from '../../sandbox-choice.js';
import { EXIT, STOP_EXIT } from '../../exit-codes.js';
import { createRunPrinter } from '../../live-status.js';
import { formatSummary } from '../../run-reporter.js';
import { printText } from '../../output.js';
import { describeAgentReach } from '../../../agents/network-reach.js';
import { checkBudgetPrices } from '../../../agents/usage/budget-prices.js';
import { describeModelRoad } from '../../../agents/model-route.js';
import { checkPresetUpstreams, presetUpstream, signingKeysWarning } from '../../../agents/command/preset-upstream.js';
import { agentConfigForAttempt } from '../../../manifest/agent-config.js';
import { finishNotifying, openNotifier } from './notifications.js';

export interface RunCommandOptions {
  world: string;
  sandbox?: 'auto' | 'docker' | 'bwrap' | 'none';
  json: boolean;
  redis?: string;
  /** Where workers find the world, when not at the same path (a git URL). */
  remote?: string;
  /** Where the mirror of a world behind a git URL is kept. @default ~/.cache/genesis/worlds */
  cacheDir?: string;
  /** Run pending tasks even when the goal's evidence passes. */
  pastEvidence?: boolean;
}

export async function runCommand(opts: RunCommandOptions): Promise<number> {
  const summary = await runWithSignals(opts);
  if (opts.json) process.stdout.write(`${JSON.stringify({ type: 'summary', ...summary })}\n`);
  else printText(`${formatSummary(summary)}\n`);
  return STOP_EXIT[summary.stop.kind];
}

/** Runs a world with signals wired: the first Ctrl-C stops cleanly, a second one exits at once. */
export async function runWithSignals(opts: RunCommandOptions): Promise<RunSummary> {
  const opened = await openWorldLocation(opts.world, opts.cacheDir);
  const { world } = opened;
  const controller = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    // Only a person's second signal quits at once: a pipe closed by the first one's reach (tee) asks for the same clean stop.
    if (controller.signal.aborted) {
      if (signal !== CLOSED_PIPE) process.exit(EXIT.forced);
      return;
    }
    process.stderr.write('\nstopping: running episodes are being stopped and recorded (press Ctrl-C again to quit at once)\n');
    controller.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const manifest = await world.manifestAt('HEAD');
  checkBudgetPrices(manifest);
  checkPresetUpstreams(manifest);
  const { choice, why } = resolveSandboxChoice({ flag: opts.sandbox, manifest: manifest.verify.sandbox, atInit: await world.initSandbox() });
  const sandbox = await createSandbox(choice, { image: manifest.verify.image });
  if (sandbox.kind === 'none') process.stderr.write(`warning: ${NONE_SANDBOX_WARNING}\n`);
  if (manifest.agent.sandbox === 'none' && agentsRunProcesses(manifest.agent)) process.stderr.write(`warning: ${NONE_AGENT_SANDBOX_WARNING}\n`);
  const cluster = opts.redis
    ? await import('./distributed.js').then((m) => m.joinCluster(opts.redis!, world, manifest.name, opts.remote ?? opened.location, () => controller.abort()))
    : null;
  if (cluster && opened.remote) {
    cluster.distributed.queue = syncingWithServer(cluster.distributed.queue, opened.remote);
    if (cluster.distributed.verifications) cluster.distributed.verifications = syncingVerifications(cluster.distributed.verifications, opened.remote);
  }
  const say = (line: string) => process.stderr.write(`${line}\n`);
  const publisher = await startPublishing(world, manifest, say);
  // Distributed runs hold it too (beside the integrator lock in Redis): a person's genesis amend
  // or task add on this machine waits for whichever scheduler runs the world.
  const lock = await acquireRunLock(world.scratchDir).catch(async (error: unknown) => {
    await cluster?.leave();
    throw error;
  });
  // Before the earlier run's records are closed: its agents must not keep working (and spending) unseen.
  const orphans = await killOrphanedAgents();
  if (orphans > 0) (opts.json ? process.stderr : process.stdout).write(`killed ${orphans} agent process(es) an earlier genesis run left behind when it died\n`);
  // A push to the accepted branch between runs is put back as a running integrator would put it back
  // (a world on a git server is the server's to guard: its branch moves only by Genesis's pushes).
  const putBack = opened.remote ? null : await putBackForeignHead(world, manifest.branch);
  if (putBack) {
    const line = `the accepted branch was moved outside Genesis to ${putBack.foreign.slice(0, 12)}; put back to ${putBack.restored.slice(0, 12)}, the commit is kept at ${putBack.quarantine}. To change the world by hand, land the change with genesis amend (see genesis amend --help), which verifies it`;
    (opts.json ? process.stderr : process.stdout).write(`${withCliName(line)}\n`);
  }
  // Said once the run holds the world, so a run that cannot start prints only its error.
  (opts.json ? process.stderr : process.stdout).write(`sandbox: ${sandbox.kind} (${why})\n`);
  const reach = describeAgentReach(manifest.agent);
  if (reach) (opts.json ? process.stderr : process.stdout).write(`${reach.line}\n`);
  if (reach?.warning) process.stderr.write(`warning: ${reach.warning}\n`);
  const agents = [manifest.agent, ...manifest.agent.rotation.map((_, i) => agentConfigForAttempt(manifest.agent, i + 1))];
  const road = describeModelRoad(agents, presetUpstream);
  if (road) (opts.json ? process.stderr : process.stdout).write(`${road}\n`);
  const signing = signingKeysWarning(agents, process.env);
  if (signing) process.stderr.write(`warning: ${signing}\n`);
  const printer = createRunPrinter(process.stdout);
  const notifier = await openNotifier({ scratchDir: world.scratchDir, worldDir: world.path }, manifest, say);
  // The OpenTelemetry SDK is loaded only when a collector is named.
  const tracer =
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT || process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
      ? await import('../../../compose/episode-tracer.js').then((m) => m.tracerFromEnv(manifest.name))
      : undefined;
  try {
    const composed = cluster ? await composeClusterRun(world, cluster.distributed, sandbox) : { ports: await composeEmbeddedRun(world, { sandbox }) };
    return await runWorld({
      world,
      ...composed,
      ports: { ...composed.ports, tracer },
      signal: controller.signal,
      pastEvidence: opts.pastEvidence,
      onEvent: (event) => {
        notifier?.notify(event);
        if (opts.json) return process.stdout.write(`${JSON.stringify(event)}\n`);
        printer.print(event);
      },
    });
  } finally {
    printer.finish();
    await finishNotifying(notifier, say);
    await tracer?.close();
    await finishPushing(opened, publisher, say);
    await lock.release();
    await cluster?.leave();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
