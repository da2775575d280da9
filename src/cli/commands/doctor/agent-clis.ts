import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { resolveOnPath } from '../../../sandbox/agent/find-binary.js';
import type { DoctorCheck } from './checks.js';

/** The pinned CLIs the conformance suite covers, one npm spec a line (the agent image installs the same). */
const COVERED_TABLE = fileURLToPath(new URL('../../../../sandboxes/agent/clis.txt', import.meta.url));

/** Each preset's program and the npm package it comes from. */
const CLIS = [
  { program: 'claude', pkg: '@anthropic-ai/claude-code' },
  { program: 'codex', pkg: '@openai/codex' },
  { program: 'gemini', pkg: '@google/gemini-cli' },
  { program: 'opencode', pkg: 'opencode-ai' },
  { program: 'copilot', pkg: '@github/copilot' },
  { program: 'qwen', pkg: '@qwen-code/qwen-code' },
] as const;

/** The versions the suite covers, by package: `{ '@openai/codex': '0.171.0' }`. */
export async function readCoveredVersions(table = COVERED_TABLE): Promise<Record<string, string>> {
  const text = await readFile(table, 'utf8').catch(() => '');
  const covered: Record<string, string> = {};
  for (const line of text.split('\n').map((l) => l.trim())) {
    if (!line || line.startsWith('#')) continue;
    const at = line.lastIndexOf('@');
    if (at > 0) covered[line.slice(0, at)] = line.slice(at + 1);
  }
  return covered;
}

/**
 * Which agent CLIs are installed here, each with its version and whether the conformance suite
 * covers that version (a preset's flags and files are proven against exactly those). A CLI that
 * is not installed is no problem; one at a version the suite does not cover is a warning.
 */
export async function checkAgentClis(path = process.env.PATH): Promise<DoctorCheck> {
  const covered = await readCoveredVersions();
  const found = await Promise.all(
    CLIS.map(async ({ program, pkg }) => {
      const bin = await resolveOnPath(program, path, process.cwd());
      if (!bin) return { program, pkg, bin: null, version: null };
      const out = await execa(bin, ['--version'], { reject: false, timeout: 20_000, env: { DISABLE_AUTOUPDATER: '1', NO_COLOR: '1' } });
      const version = /(\d+\.\d+\.\d+)/.exec(`${out.stdout}\n${out.stderr}`)?.[1] ?? null;
      return { program, pkg, bin, version };
    }),
  );
  const lines = found.map(({ program, pkg, bin, version }) => {
    if (!bin) return `${program}: not installed`;
    const want = covered[pkg];
    const verdict =
      version === null ? 'version unknown' : version === want ? 'covered by the conformance suite' : `not covered (the suite covers ${want ?? 'no version'})`;
    return `${program} ${version ?? '?'} (${bin}): ${verdict}`;
  });
  const uncovered = found.filter((f) => f.bin && f.version !== covered[f.pkg]);
  return {
    name: 'agent-clis',
    status: uncovered.length > 0 ? 'warn' : 'ok',
    detail: lines.join('\n'),
    hint:
      uncovered.length > 0
        ? `install a covered version (${uncovered.map((f) => `npm install -g ${f.pkg}@${covered[f.pkg] ?? 'latest'}`).join('; ')}), or expect its flags to differ from what the preset passes`
        : null,
  };
}
