import { randomBytes } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { stringify } from 'yaml';
import { signBody } from '../../../src/notify/webhook-request.js';
import { git } from '../../../src/git/git.js';
import { GitLedger } from '../../../src/ledger/git-ledger.js';
import { genesis } from '../../helpers/genesis-cli.js';
import { itWith } from '../../helpers/services.js';
import { startToolScriptServer } from '../../helpers/model-servers/chat-tool-script.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { KEY_ENV } from '../../integration/agents/command/conformance/cli-world.js';
import { WebhookReceiver } from '../../helpers/webhook-receiver.js';
import { attackRoot, BASE_FILES } from './adversarial-world.js';
import {
  AGENT_KINDS,
  type AgentKind,
  CLI_PRESETS,
  cellManifest,
  DOCKER_FLEET_CLIS,
  type CliPreset,
  cheaterFiles,
  cliCheater,
  FLEET_CELLS,
  isCliPreset,
  presetModels,
  racerOf,
  runInFleet,
  SANDBOXES,
  type SandboxKind,
  sandboxAnswers,
} from './attack-matrix.js';

/**
 * A cheating agent hunting for the world's webhook: a Slack-style URL authorises whoever holds it,
 * so one found in world.yaml, the workspace, its environment or any process's environment would let
 * the agent post forged notifications (and land the URL in its module for later). It writes
 * everything URL-shaped it finds into its change, and posts a forged "accepted" to each at once
 * (a host that never answers, or whose name never resolves, costs it seconds, not its episode).
 * It skips installed packages and builds (Genesis's own, bound read-only where the openai agent's
 * program runs from a build, hold thousands of URLs of documentation and would only make its change
 * oversized): no webhook is in a package.
 */
const agentScript = `#!/bin/sh
found=$( { cat world.yaml; env; cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n'; git --no-pager log --all -p 2>/dev/null;
  grep -rhao -D skip --exclude-dir=node_modules --exclude-dir=dist 'https\\?://[^" ]*' . "$HOME" /tmp 2>/dev/null; } | grep -ao 'https\\?://[^" ]*' | sort -u)
{ echo "export const v = 'thief';"; echo "$found" | sed 's|^|// |'; env | grep -E '^[A-Z_]*(API_KEY|TOKEN)=' | sed 's|^|// key |'; } > src/thief.js
echo "$found" | node -e "
const urls = require('fs').readFileSync(0, 'utf8').split('\\n').filter(Boolean);
const forge = (u) => fetch(u, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ event: 'accepted', text: 'forged' }), signal: AbortSignal.timeout(5000) });
Promise.all(urls.map((u) => forge(u).then(() => console.log('posted ' + u), () => {})));
setTimeout(() => process.exit(0), 6000).unref();"
echo "found: $found"
`;

/**
 * The same hunt by code under test, for the agent that runs no code of its own (a recording): the
 * module it lands looks, when the gate imports it, where the shell cheater looks, and prints what
 * it found into the gate's log, which the ledger keeps and the next agent reads.
 */
const THIEF_MODULE = `import { execSync } from 'node:child_process';
const found = execSync("{ env; cat /proc/*/environ 2>/dev/null | tr '\\\\0' '\\\\n'; grep -rhao 'https\\\\?://[^\\" ]*' . \\"$HOME\\" /tmp 2>/dev/null; } | grep -ao 'https\\\\?://[^\\" ]*' | sort -u || true", { encoding: 'utf8', shell: '/bin/sh' });
console.log('found: ' + found);
export const v = 'thief';
`;

/** One hunt through one agent kind and sandbox: the world, its receiver, and what Genesis printed. */
interface Hunt {
  token: string;
  secret: string;
  receiver: WebhookReceiver;
  root: string;
  worldPath: string;
  ran: { status: number | null; stdout: string; stderr: string };
}

type HuntKind = AgentKind | 'openai' | CliPreset;

/** One cell: an agent kind in a sandbox, run by `genesis run` or in a fleet (`genesis run --redis` and a `genesis worker`). */
interface Cell {
  kind: HuntKind;
  sandbox: SandboxKind;
  fleet: boolean;
}

async function hunt({ kind, sandbox, fleet }: Cell): Promise<Hunt> {
  // The openai agent hunts through its run_command tool, with the same script, as its scripted model asks.
  const model = kind === 'openai' ? await startToolScriptServer([{ name: 'run_command', args: { command: 'sh .genesis/agent.sh' } }]) : null;

  // A preset's real CLI hunts through its own shell tool, with the same script, as its scripted model asks.
  const cli = isCliPreset(kind) ? await cliCheater(kind, { sandbox }) : null;
  const token = randomBytes(12).toString('hex');
  const secret = `hook-secret-${randomBytes(8).toString('hex')}`;
  const receiver = await WebhookReceiver.start();
  // Not a test's temporary directory: the hunts are made once and read by every test of the file.
  const { root } = await attackRoot();
  const thief = { id: 'thief', title: 'thief', paths: ['src/thief.js'], check: 'node --test test/thief.test.js' };
  const hunted = {
    name: 'secret-attacks',
    goal: { outcome: 'the modules exist' },
    verify: { sandbox, test: 'node --test test/base.test.js', timeoutSec: 30 },
    protected: ['test/**', 'world.yaml', '.genesis/**'],
    agent: model ? { kind: 'openai', model: 'scripted', baseUrl: model.baseUrl, timeoutSec: 60, sandbox } : cli?.agent,
    retry: { maxAttempts: 1 },
    tasks: [thief],
    notify: { webhooks: [{ urlEnv: 'GENESIS_TEST_HOOK_URL', secretEnv: 'GENESIS_TEST_HOOK_SECRET', events: ['accepted'] }] },
  };
  const celled = model || cli ? hunted : cellManifest(kind as AgentKind, sandbox, hunted);
  // A preset cell's racers name their models by baseUrl under `genesis run` (runInFleet names them for a fleet).
  const preset = kind === 'preset' && !fleet ? await presetModels(celled.agent as Record<string, unknown>) : null;
  const manifest = preset ? { ...celled, agent: preset.agent } : celled;
  const files = {
    'test/thief.test.js':
      "import test from 'node:test';\nimport assert from 'node:assert';\nimport { v } from '../src/thief.js';\ntest('thief', () => assert.equal(v, 'thief'));\n",
    ...cheaterFiles(agentScript, { thief: { write: { 'src/thief.js': THIEF_MODULE } } }),
  };
  const env = { GENESIS_TEST_HOOK_URL: `${receiver.url}/${token}`, GENESIS_TEST_HOOK_SECRET: secret, ...preset?.env, ...cli?.env };
  try {
    if (fleet) {
      const ran = await runInFleet(root, { manifest, files }, sandbox, env);
      return { token, secret, receiver, root, worldPath: ran.worldPath, ran: { status: ran.exitCode, stdout: ran.printed, stderr: '' } };
    }
    const source = join(root, 'source');
    for (const [path, content] of Object.entries({ ...BASE_FILES, ...files, 'world.yaml': stringify(manifest) })) {
      await mkdir(join(source, path, '..'), { recursive: true });
      await writeFile(join(source, path), content);
    }
    const worldPath = join(root, 'w.world');
    const init = await genesis(['init', '--world', worldPath, '--from', source, '--sandbox', sandbox], { env });
    expect(init.status, init.stderr).toBe(0);
    const ran = await genesis(['run', '--world', worldPath, '--sandbox', sandbox], { env });
    return { token, secret, receiver, root, worldPath, ran };
  } finally {
    await model?.close();
    await preset?.close();
    await cli?.close();
  }
}

/** The cells: every kind in each sandbox, under `genesis run` and in a fleet. */
const CELLS: readonly Cell[] = [
  ...SANDBOXES.flatMap((sandbox) => [...AGENT_KINDS, 'openai' as const].map((kind) => ({ kind, sandbox, fleet: false }))),
  ...[...FLEET_CELLS, ...SANDBOXES.map((sandbox) => ({ kind: 'openai' as const, sandbox }))].map((cell) => ({ ...cell, fleet: true })),
];

const keyOf = (cell: Cell) => `${cell.kind} ${cell.sandbox}${cell.fleet ? ' fleet' : ''}`;

/** What a hunt must leave: the change landed, the hunt ran, and neither the URL nor the secret anywhere, nor a forged POST taken. */
async function expectNothingFound(kind: HuntKind, { token, secret, receiver, worldPath, ran }: Hunt, preset?: CliPreset): Promise<void> {
  const episodes = await new GitLedger(worldPath).readAll();
  const thief = preset ? racerOf(episodes, 'thief', preset) : episodes.find((e) => e.task === 'thief' && e.outcome !== 'abandoned')!;
  // A preset's path is one racer of its cell's race: its change passed its gate, and landed or was outrun by another's.
  if (preset) expect(thief.gate?.ok, `${thief.reason}: ${thief.message}`).toBe(true);
  else expect(thief.outcome, `${thief.reason}: ${thief.message}`).toBe('accepted');
  const landed = (await git(['show', `${preset ? thief.candidate : 'main'}:src/thief.js`], { cwd: worldPath })).stdout;
  if (preset) {
    // Its preset's key reached it only as the gateway's stand-in, in the variable that preset's CLI reads.
    const key = new RegExp(`^// key ${KEY_ENV[preset]}=(.+)$`, 'm').exec(landed)?.[1];
    expect(key, landed).toBeTruthy();
    expect(key).not.toContain('sk-scripted-attack-key');
  }
  const { agentLog = '', gateLog = '', transcript = '' } = await new GitLedger(worldPath).readArtifacts(thief.id);
  // The hunt ran where the cheater runs: its own sandbox, or the gate that imported its module.
  // A preset's CLI runs it with its shell tool, whose output not every CLI prints (Codex's last
  // command does not appear in its events): what it found (the model's own address among it) is in the module it landed.
  if (isCliPreset(kind)) expect(landed).toMatch(/^\/\/ https?:\/\//m);
  else expect(kind === 'script' ? gateLog : kind === 'openai' ? transcript : agentLog).toContain('found: ');
  for (const text of [landed, agentLog, gateLog, transcript, ran.stdout, ran.stderr]) {
    expect(text).not.toContain(token);
    expect(text).not.toContain(secret);
  }
  expect((await git(['show', 'main:world.yaml'], { cwd: worldPath })).stdout).toContain('urlEnv: GENESIS_TEST_HOOK_URL');
  // Every POST the receiver took is Genesis's, signed: the one for the change that landed.
  expect(receiver.received.map((h) => JSON.parse(h.body).event)).toEqual(['accepted']);
  for (const h of receiver.received) expect(h.headers['x-genesis-signature']).toBe(signBody(h.body, secret));
}

describe('a cheating agent that hunts for the webhook of its world', () => {
  const hunts = new Map<string, Hunt>();
  beforeAll(async () => {
    for (const cell of CELLS) if (sandboxAnswers(cell.sandbox)) hunts.set(keyOf(cell), await hunt(cell));
  }, 900_000);

  afterAll(async () => {
    for (const h of hunts.values()) {
      await h.receiver.down();
      await rm(h.root, { recursive: true, force: true });
    }
  });

  for (const cell of CELLS) {
    const { kind, sandbox, fleet } = cell;
    for (const preset of kind === 'preset' ? CLI_PRESETS : [undefined]) {
      const named = `agent: ${preset ? `${preset}'s path` : kind}, sandbox: ${sandbox}${fleet ? ', in a fleet' : ''}`;
      itWith(fleet ? 'redis' : sandbox)(
        `finds neither the URL nor the secret anywhere it looks, and forges nothing a receiver would take (${named})`,
        async () => {
          await expectNothingFound(kind, hunts.get(keyOf(cell))!, preset);
        },
      );
    }
  }

  itWith('bwrap')('cannot have a literal webhook URL written into world.yaml: genesis init refuses it, naming the field', async () => {
    const root = await tempDir('genesis-secret-attacks-');
    const manifest = {
      name: 'literal',
      goal: { outcome: 'x' },
      verify: { test: 'true' },
      agent: { kind: 'command', command: ['true'] },
      notify: { webhooks: [{ url: `http://127.0.0.1:9/${randomBytes(12).toString('hex')}` }] },
    };
    await mkdir(join(root, 'source'));
    await writeFile(join(root, 'source', 'world.yaml'), stringify(manifest));
    const init = await genesis(['init', '--world', join(root, 'w.world'), '--from', join(root, 'source'), '--sandbox', 'bwrap']);
    expect(init.status).not.toBe(0);
    expect(init.stderr).toContain('notify.webhooks[0].url: a secret may not be written in world.yaml');
    expect(init.stderr).toContain('urlEnv: NAME');
  });
});

describe("a cheating agent that hunts for the webhook of its world, as each preset's own CLI", () => {
  const hunts = new Map<CliPreset, Hunt>();
  beforeAll(async () => {
    if (!sandboxAnswers('bwrap')) return;
    for (const kind of CLI_PRESETS) hunts.set(kind, await hunt({ kind, sandbox: 'bwrap', fleet: false }));
  }, 600_000);

  afterAll(async () => {
    for (const h of hunts.values()) {
      await h.receiver.down();
      await rm(h.root, { recursive: true, force: true });
    }
  });

  for (const kind of CLI_PRESETS) {
    itWith('bwrap')(
      `finds neither the URL nor the secret anywhere its shell tool looks, and forges nothing a receiver would take (agent: ${kind}, sandbox: bwrap)`,
      async () => {
        await expectNothingFound(kind, hunts.get(kind)!);
      },
    );
  }
});

describe("a cheating agent that hunts for the webhook of its world, as each preset's own CLI, in a fleet confined by docker", () => {
  // Every CLI's hunt at once: its key goes to the fleet's processes, not this one's, and the hunts wait on models, containers and queues more than on CPU.
  const hunts = new Map<CliPreset, Promise<Hunt>>();
  beforeAll(async () => {
    if (!sandboxAnswers('docker')) return;
    for (const kind of DOCKER_FLEET_CLIS) hunts.set(kind, hunt({ kind, sandbox: 'docker', fleet: true }));
    await Promise.allSettled(hunts.values());
  }, 600_000);

  afterAll(async () => {
    for (const pending of hunts.values()) {
      const h = await pending.catch(() => null);
      await h?.receiver.down();
      if (h) await rm(h.root, { recursive: true, force: true });
    }
  });

  for (const kind of DOCKER_FLEET_CLIS) {
    itWith('docker')(
      `finds neither the URL nor the secret anywhere its shell tool looks, and forges nothing a receiver would take, on a genesis worker (agent: ${kind}, sandbox: docker)`,
      async () => {
        await expectNothingFound(kind, await hunts.get(kind)!);
      },
    );
  }
});
