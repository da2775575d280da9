/**
 * What a secret looks like, for world.yaml and for the ledger's scrubber alike. world.yaml sits at
 * the root of the accepted tree, which every agent reads: a secret written there is a secret given
 * to every agent. So settings that are secrets are given by reference (a variable's name, or a file
 * outside the world), and any value shaped like a key is refused wherever it is written. Pure.
 */

/** Well-known key formats, each a regular expression source matched globally. */
export const KEY_FORMATS: ReadonlyArray<{ name: string; pattern: RegExp }> = [
  { name: 'private key block', pattern: /-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|(?=")|$)/g },
  // The same keys as `sk-(?:[A-Za-z0-9]+-)*[A-Za-z0-9_-]{20,}`, without the group that a run of `sk-a-a-…` backtracked through.
  { name: 'OpenAI or Anthropic key', pattern: /\bsk-[A-Za-z0-9_-]{20,}/g },
  { name: 'GitHub token', pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})/g },
  { name: 'GitLab token', pattern: /\bglpat-[A-Za-z0-9_-]{20,}/g },
  { name: 'AWS access key id', pattern: /\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b/g },
  { name: 'Slack token', pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,}/g },
  { name: 'Google API key', pattern: /\bAIza[0-9A-Za-z_-]{35}/g },
  { name: 'Hugging Face token', pattern: /\bhf_[A-Za-z0-9]{30,}/g },
  { name: 'Stripe key', pattern: /\b[rs]k_(?:live|test)_[0-9A-Za-z]{20,}/g },
  { name: 'JSON web token', pattern: /\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/g },
  // The look-behind is bounded: an unbounded \s+ in it is scanned again from every position of a long run of spaces.
  { name: 'bearer credential', pattern: /(?<=\b(?:Bearer|Basic|token)\s{1,16})[A-Za-z0-9._~+/=-]{20,}/gi },
];

/** URLs that authorise whoever holds them: incoming webhooks whose path is the credential. */
const CAPABILITY_URLS: ReadonlyArray<{ name: string; pattern: RegExp }> = [
  { name: 'Slack webhook URL', pattern: /\bhooks\.slack\.com\/(?:services|workflows|triggers)\//i },
  { name: 'Discord webhook URL', pattern: /\bdiscord(?:app)?\.com\/api\/webhooks\//i },
  { name: 'Microsoft Teams webhook URL', pattern: /\.webhook\.office\.com\/|\.logic\.azure\.com\/workflows\//i },
  { name: 'Mattermost or Rocket.Chat webhook URL', pattern: /\/hooks\/[A-Za-z0-9]{20,}/ },
];

// A password in a URL's user part (https://user:token@host, redis://:password@host), and a query
// parameter named like a credential (?token=…, &api_key=…, &sig=…).
const URL_PASSWORD = /\b[a-z][a-z0-9+.-]*:\/\/[^\s/@:]*:[^\s/@]+@/i;
const URL_CREDENTIAL_PARAM = /[?&](?:access_?token|api[-_]?key|apikey|auth|key|password|passwd|pwd|secret|sig|signature|token)=[^&\s]{6,}/i;

/** The kind of secret `value` looks like, or null. Linear in `value`: each pattern has no nested repetition. */
export function secretShapeOf(value: string): string | null {
  if (URL_PASSWORD.test(value)) return 'a URL with a password in it';
  if (URL_CREDENTIAL_PARAM.test(value)) return 'a URL with a credential in its query';
  for (const { name, pattern } of [...CAPABILITY_URLS, ...KEY_FORMATS]) {
    pattern.lastIndex = 0;
    const found = pattern.test(value);
    pattern.lastIndex = 0;
    if (found) return name;
  }
  return null;
}

/**
 * Settings that are secrets by what they are, whatever their value looks like, and the reference
 * to write instead. A key here is refused in world.yaml even when its value looks harmless.
 */
const SECRET_FIELDS: ReadonlyArray<{ path: RegExp; instead: string }> = [
  {
    path: /^notify\.webhooks\[\d+\]\.url$/,
    instead:
      'anyone who has a webhook URL can post to it: put it in an environment variable and write urlEnv: NAME, or in a file outside the world and write urlFile: /path',
  },
  { path: /^notify\.webhooks\[\d+\]\.secret$/, instead: 'write secretEnv: NAME (a variable holding it) or secretFile: /path (a file outside the world)' },
  { path: /(^|\.)apiKey$/, instead: 'write apiKeyEnv: NAME, a variable holding the key (Genesis reads it; the agent never sees it)' },
];

/** How to pass a secret without writing it in world.yaml, for a field that holds a secret-shaped value. */
const REFER_INSTEAD =
  'world.yaml is read by every agent. Give a secret by reference: a variable name (apiKeyEnv for a model key; urlEnv and secretEnv for a webhook) or a file outside the world (urlFile, secretFile); a command reads it from its environment';

/** Where in a parsed world.yaml a secret is written: `path: what is wrong and how to pass it instead`, one per finding. */
export function literalSecretsIn(doc: unknown): string[] {
  const found: string[] = [];
  const visit = (value: unknown, path: string): void => {
    const field = SECRET_FIELDS.find((f) => f.path.test(path));
    if (field && value !== undefined && value !== null) {
      found.push(`${path}: a secret may not be written in world.yaml; ${field.instead}`);
      return;
    }
    if (typeof value === 'string') {
      const shape = secretShapeOf(value);
      if (shape) found.push(`${path}: looks like a secret (${shape}). ${REFER_INSTEAD}`);
    } else if (Array.isArray(value)) {
      for (const [i, item] of value.entries()) visit(item, `${path}[${i}]`);
    } else if (value !== null && typeof value === 'object') {
      for (const [key, item] of Object.entries(value)) visit(item, path ? `${path}.${key}` : key);
    }
  };
  visit(doc, '');
  return found;
}
