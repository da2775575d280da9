import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { startAnthropicServer } from '../../helpers/model-servers/anthropic-messages.js';
import type { ScriptedServer } from '../../helpers/model-servers/scripted-server.js';
import { dockerAnswers, itWith } from '../../helpers/services.js';
import { genesis } from '../../helpers/genesis-cli.js';
import { attackRoot, runAttackedWorld, type AttackedWorld } from './adversarial-world.js';

/**
 * Agents that hunt for the model key, in the default sandbox: their environment, every process's
 * environ and command line they can see, their HOME and /tmp, the prompt, and the memory of their
 * own processes. The key lives in this host's environment (agent.apiKeyEnv); the agent holds a
 * stand-in, which works for its own calls at the gateway and nowhere else: not at the model
 * server itself, not in the next episode.
 */
const agentScript = `#!/bin/sh
id="$GENESIS_TASK_ID"
hunt() {
  env
  for p in /proc/[0-9]*; do tr '\\0' '\\n' < "$p/environ" 2>/dev/null; tr '\\0' ' ' < "$p/cmdline" 2>/dev/null; echo; done
  grep -ras "" "$HOME" /tmp 2>/dev/null
  node -e "
    const fs = require('fs');
    for (const pid of fs.readdirSync('/proc').filter((p) => /^\\\\d+$/.test(p))) {
      try {
        for (const line of fs.readFileSync('/proc/' + pid + '/maps', 'utf8').split('\\\\n')) {
          const m = /^([0-9a-f]+)-([0-9a-f]+) rw/.exec(line);
          if (!m) continue;
          const fd = fs.openSync('/proc/' + pid + '/mem', 'r');
          const start = parseInt(m[1], 16), size = Math.min(parseInt(m[2], 16) - start, 1 << 22);
          const buf = Buffer.alloc(size);
          try { fs.readSync(fd, buf, 0, size, start); process.stdout.write(buf.toString('latin1').replace(/[^\\\\x20-\\\\x7e]+/g, '\\\\n')); } catch {}
          fs.closeSync(fd);
        }
      } catch {}
    }"
}
call() {
  node -e "fetch(process.argv[1] + '/v1/messages', { method: 'POST', headers: { 'x-api-key': process.argv[2], 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }) })
    .then((r) => console.log('$1=' + r.status), (e) => console.log('$1=' + e.cause?.code))" "$2" "$3"
}
hunt > /tmp/hunt.txt 2>&1
# The key's shape, not the key: the pattern's own text (in this shell's memory) does not match it.
grep -cE 'sk-ant-real-[0-9a-f]{8}-[0-9a-f]{24}' /tmp/hunt.txt | sed 's/^/real-key-hits=/'
grep -c 'genesis-stand-in-' /tmp/hunt.txt | sed 's/^/stand-in-hits=/'
echo "stand-in=$GENESIS_TEST_MODEL_KEY"
call own-call "$GENESIS_MODEL_URL" "$GENESIS_TEST_MODEL_KEY"
case "$id" in
first) printf "export const v = 'first';\\nexport const standIn = '%s';\\n" "$GENESIS_TEST_MODEL_KEY" > src/first.js ;;
second)
  old=$(sed -n "s/^export const standIn = '\\\\(.*\\\\)';/\\\\1/p" src/first.js)
  echo "old-stand-in=$old"
  call old-stand-in "$GENESIS_MODEL_URL" "$old"
  printf "export const v = 'second';\\n" > src/second.js ;;
esac
`;

const id = randomBytes(4).toString('hex');
const REAL_KEY = `sk-ant-real-${id}-${randomBytes(12).toString('hex')}`;

let server: ScriptedServer;
const worlds = new Map<'bwrap' | 'docker', AttackedWorld>();

/** The same two tasks in one agent sandbox: the default (bwrap), or docker, whose agents meet the gateway on their network's gateway address. */
async function runKeyWorld(sandbox: 'bwrap' | 'docker'): Promise<AttackedWorld> {
  const dirs = await attackRoot();
  const task = (name: string, extra: Record<string, unknown> = {}) => ({
    id: name,
    title: name,
    paths: [`src/${name}.js`],
    check: `node -e "import('./src/${name}.js').then((m) => process.exit(m.v === '${name}' ? 0 : 1))"`,
    ...extra,
  });
  const manifest = {
    name: `key-attacks-${sandbox}`,
    goal: { outcome: 'both modules exist' },
    verify: { sandbox: 'bwrap', test: 'node --test test/base.test.js', timeoutSec: 30 },
    protected: ['test/**', 'world.yaml', '.genesis/**'],
    agent: {
      kind: 'command',
      command: ['sh', '.genesis/agent.sh'],
      baseUrl: server.origin,
      apiKeyEnv: 'GENESIS_TEST_MODEL_KEY',
      timeoutSec: 60,
      // No agent.sandbox for the default: it must keep the key out by itself.
      ...(sandbox === 'docker' ? { sandbox: 'docker', image: 'genesis/node:20' } : {}),
    },
    retry: { maxAttempts: 1 },
    parallelism: 1,
    tasks: [task('first'), task('second', { dependsOn: ['first'] })],
  };
  return runAttackedWorld({ root: dirs.root, manifest, files: { '.genesis/agent.sh': agentScript }, sandbox: 'bwrap' });
}

beforeAll(async () => {
  server = await startAnthropicServer();
  process.env.GENESIS_TEST_MODEL_KEY = REAL_KEY;
  try {
    worlds.set('bwrap', await runKeyWorld('bwrap'));
    if (dockerAnswers()) worlds.set('docker', await runKeyWorld('docker'));
  } finally {
    delete process.env.GENESIS_TEST_MODEL_KEY;
  }
}, 300_000);
afterAll(async () => {
  for (const w of worlds.values()) await w.dispose();
  await server?.close();
});

for (const sandbox of ['bwrap', 'docker'] as const) {
  describe(`an agent hunting for its model key (agent sandbox ${sandbox === 'bwrap' ? 'default' : sandbox})`, () => {
    itWith(sandbox)('finds only its stand-in, whose calls reach the model with the real key put in by the gateway', async () => {
      const w = worlds.get(sandbox)!;
      expect(w.summary).toMatchObject({ accepted: 2 });
      const first = (await w.artifactsOf('first')).agentLog ?? '';
      expect(first).toMatch(/stand-in=genesis-stand-in-/);
      expect(first).toContain('own-call=200');
      // The hunt read its environment, every process it sees and their memory: it found its stand-in, and the real key nowhere.
      expect(first).toMatch(/stand-in-hits=[1-9]/);
      expect(first).toContain('real-key-hits=0');
      for (const task of ['first', 'second']) {
        const artifacts = await w.artifactsOf(task);
        expect(JSON.stringify(artifacts)).not.toContain(REAL_KEY);
        expect(JSON.stringify(w.episodeOf(task))).not.toContain(REAL_KEY);
      }
      // The model server saw the real key on each call, never a stand-in.
      const calls = server.requests.filter((r) => r.method === 'POST');
      expect(calls.length).toBeGreaterThanOrEqual(2);
      for (const call of calls) {
        expect(call.headers['x-api-key']).toBe(REAL_KEY);
        expect(JSON.stringify(call)).not.toContain('genesis-stand-in-');
      }
    });

    itWith(sandbox)('leaves its model calls in the record, which genesis show prints without the key', async () => {
      const w = worlds.get(sandbox)!;
      const shown = await genesis(['show', '--world', w.world.path, w.episodeOf('first').id, '--conversation']);
      expect(shown.status).toBe(0);
      expect(shown.stdout).toMatch(/model calls[\s\S]*POST \/v1\/messages claude-sonnet-4-5 → 200: \d+ in/);
      expect(shown.stdout).toContain('sent: {');
      expect(shown.stdout).toMatch(/usage, measured at the model gateway over 1 call/);
      expect(shown.stdout).not.toContain(REAL_KEY);
    });

    itWith(sandbox)("is refused when it calls with another episode's stand-in", async () => {
      const second = (await worlds.get(sandbox)!.artifactsOf('second')).agentLog ?? '';
      expect(second).toMatch(/old-stand-in=genesis-stand-in-/);
      expect(second).toContain('old-stand-in=401');
      expect(second).toContain('own-call=200');
    });
  });
}
