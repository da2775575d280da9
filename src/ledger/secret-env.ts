import { PRESET_ENV, PRESET_SETTINGS } from '../manifest/preset-names.js';
import type { WorldManifest } from '../manifest/schema.js';
import { scrubSecrets } from './secret-scrubber.js';

/** Names that say a variable holds a credential, whether or not a manifest passes it. */
const SECRET_NAME = /(?:^|_)(?:API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASS|CREDENTIALS?|AUTH)(?:_|$)/i;

/** A variable that names where or how, not a credential: an endpoint (`*_BASE_URL`, `*_API_BASE`) or a preset's setting. */
function isSetting(name: string): boolean {
  return !SECRET_NAME.test(name) && (PRESET_SETTINGS.has(name) || /_(?:BASE_URL|API_BASE|BASE)$/.test(name));
}

/**
 * The variables whose values the ledger scrubs: those the manifest passes to agents (`agent.env`,
 * rotation entries' `env`, `apiKeyEnv`), every preset's own, and any variable of this process
 * whose name says it is a credential; not endpoints and settings (a base URL is no secret, and
 * scrubbing IS_SANDBOX's "1" would garble every log), unless named by `apiKeyEnv`.
 */
export function secretEnvNames(agent?: WorldManifest['agent'], env: NodeJS.ProcessEnv = process.env): string[] {
  const names = new Set<string>(
    Object.values(PRESET_ENV)
      .flat()
      .filter((name) => !isSetting(name)),
  );
  for (const name of Object.keys(env)) if (SECRET_NAME.test(name)) names.add(name);
  if (agent) {
    for (const name of agent.env) if (!isSetting(name)) names.add(name);
    if (agent.apiKeyEnv) names.add(agent.apiKeyEnv);
    for (const entry of agent.rotation) {
      for (const name of entry.env ?? []) if (!isSetting(name)) names.add(name);
      if (entry.apiKeyEnv) names.add(entry.apiKeyEnv);
    }
  }
  return [...names];
}

/** The values of `names` in `env` (unset ones left out). */
export function secretValues(names: readonly string[], env: NodeJS.ProcessEnv = process.env): string[] {
  return names.map((name) => env[name]).filter((value): value is string => value !== undefined && value !== '');
}

/**
 * `text` as it may be stored: scrubbed of the values of `names` and of every default secret
 * variable (see secretEnvNames) of this process, and of well-known key formats.
 */
export function scrubForStorage(text: string, names: readonly string[] = []): string {
  return scrubSecrets(text, secretValues([...secretEnvNames(), ...names]));
}
