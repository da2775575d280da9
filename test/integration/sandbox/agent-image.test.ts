import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect } from 'vitest';
import { stringify } from 'yaml';
import { createCommandAgent } from '../../../src/agents/command/create-command-agent.js';
import { parseManifest } from '../../../src/manifest/parse.js';
import { createAgentSandbox } from '../../../src/sandbox/create-agent-sandbox.js';
import { agentImageBuilt } from '../../helpers/agent-image.js';
import { dockerAnswers, itWith } from '../../helpers/services.js';
import { tempDir } from '../../helpers/temp-dir.js';

const SANDBOXES = join(import.meta.dirname, '..', '..', '..', 'sandboxes');
/** The pinned CLIs, as the builder reads them: `name@version` lines. */
const PINNED = readFileSync(join(SANDBOXES, 'agent', 'clis.txt'), 'utf8')
  .split('\n')
  .filter((line) => line !== '' && !line.startsWith('#'));

beforeAll(async () => {
  if (dockerAnswers()) await agentImageBuilt();
}, 900_000);

function agentConfig(agent: Record<string, unknown>) {
  const { manifest, errors } = parseManifest(stringify({ name: 'w', goal: { outcome: 'x' }, verify: { test: 'true' }, agent }));
  expect(errors).toEqual([]);
  return manifest!.agent;
}

describe('the docker agent sandbox with no agent.image', () => {
  itWith('docker')(
    'runs the agent in the agent image, where every pinned CLI answers at its pinned version, with Node and git',
    async () => {
      const probe =
        'claude --version; codex --version; gemini --version; opencode --version; copilot --version; qwen --version; node --version; git --version; id -u';
      const agent = await createCommandAgent(agentConfig({ kind: 'command', preset: 'codex', sandbox: 'docker', command: ['sh', '-c', probe] }));
      const dir = await tempDir('genesis-agent-image-');
      const workspace = join(dir, 'ws');
      execFileSync('git', ['init', '--quiet', workspace]);
      const promptFile = join(dir, 'prompt.md');
      await writeFile(promptFile, 'versions\n');
      const result = await agent.run({ workspace, promptFile, prompt: '', env: { GENESIS_EPISODE_ID: 'e1' }, timeoutMs: 240_000, taskId: 't', attempt: 1 });
      expect(result.exitCode, result.log).toBe(0);
      const version = (spec: string) => spec.slice(spec.lastIndexOf('@') + 1);
      expect(PINNED).toHaveLength(6);
      for (const spec of PINNED) expect(result.log, spec).toContain(version(spec));
      expect(result.log).toMatch(/^v20\./m);
      expect(result.log).toMatch(/^git version /m);
      // Not root, and not a uid another sandbox holds: a uid leased for this launch.
      const uid = Number(result.log.match(/^(\d+)$/m)?.[1]);
      expect(uid).toBeGreaterThanOrEqual(100_000);
    },
    300_000,
  );

  itWith('docker')('says how to build a missing agent image', async () => {
    const error = await createAgentSandbox({ kind: 'docker', image: 'genesis/agent:no-such-tag', network: 'genesis-agents' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'agent-sandbox-unavailable', hint: expect.stringContaining('sandboxes/build-images.sh') });
  });
});
