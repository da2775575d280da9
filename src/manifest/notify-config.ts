import { z } from 'zod';

/**
 * What a webhook can be told, one name per kind of moment a person may want to hear about:
 * a change landed or was refused, a task gave up, a change waits for a person, a budget ran out,
 * a run ended, a worker vanished with an episode.
 */
export const NOTIFY_EVENTS = ['accepted', 'rejected', 'blocked', 'awaiting-review', 'budget-spent', 'stopped', 'worker-lost', 'held'] as const;
export type NotifyEventName = (typeof NOTIFY_EVENTS)[number];

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
// A file named by an absolute path: a path relative to the world would be a file in its tree, where every agent reads it.
const OUTSIDE_FILE = /^\//;

/**
 * A webhook is named by reference only: a webhook URL authorises whoever holds it (a Slack-style
 * hook takes any POST to its URL), and world.yaml is read by every agent, so the URL and the
 * signing secret live in the environment or in a file outside the world (parse refuses a literal).
 */
const webhook = z
  .object({
    urlEnv: z
      .string()
      .regex(ENV_NAME, 'the name of an environment variable')
      .optional()
      .describe('variable holding the URL each notification is POSTed to (http or https); while it is unset, deliveries wait in the outbox'),
    urlFile: z
      .string()
      .regex(OUTSIDE_FILE, 'an absolute path, to a file outside the world')
      .optional()
      .describe('file outside the world holding that URL (its first line); instead of urlEnv'),
    events: z
      .array(z.enum(NOTIFY_EVENTS))
      .min(1, 'name at least one event, or remove the webhook')
      .default([...NOTIFY_EVENTS])
      .describe(
        'which notifications this webhook gets: accepted, rejected, blocked, awaiting-review, budget-spent, stopped, worker-lost, held (a usage limit, or a model the world waits for); default: all',
      ),
    secretEnv: z
      .string()
      .regex(ENV_NAME, 'the name of an environment variable')
      .optional()
      .describe(
        'variable holding the secret each body is signed with (HMAC-SHA256, header X-Genesis-Signature: sha256=<hex>); while it is unset, deliveries wait in the outbox',
      ),
    secretFile: z
      .string()
      .regex(OUTSIDE_FILE, 'an absolute path, to a file outside the world')
      .optional()
      .describe('file outside the world holding that secret (its first line); instead of secretEnv'),
    format: z
      .enum(['json', 'slack'])
      .default('json')
      .describe("json: Genesis's own payload; slack: { text } as Slack-compatible incoming webhooks (Slack, Mattermost, Rocket.Chat) take it"),
  })
  .strict()
  .refine((h) => (h.urlEnv === undefined) !== (h.urlFile === undefined), {
    message: 'name where the URL is: urlEnv (a variable) or urlFile (a file outside the world), exactly one',
  })
  .refine((h) => h.secretEnv === undefined || h.secretFile === undefined, { message: 'give the signing secret once: secretEnv or secretFile' });

export const notifyConfig = z
  .object({
    webhooks: z
      .array(webhook)
      .default([])
      .describe('webhooks told of what happens in the world; a failed delivery is retried with backoff, also by the next genesis run'),
  })
  .strict();

export type WebhookSpec = z.output<typeof webhook>;

/** Where a webhook's secret setting is: a variable's name or a file's path, never the value. */
export type SecretRef = { env: string } | { file: string };

/** The reference of a webhook's URL. */
export function webhookUrlRef(hook: Pick<WebhookSpec, 'urlEnv' | 'urlFile'>): SecretRef {
  return hook.urlEnv !== undefined ? { env: hook.urlEnv } : { file: hook.urlFile! };
}

/** The reference of a webhook's signing secret, or null when its bodies are not signed. */
export function webhookSecretRef(hook: Pick<WebhookSpec, 'secretEnv' | 'secretFile'>): SecretRef | null {
  return hook.secretEnv !== undefined ? { env: hook.secretEnv } : hook.secretFile !== undefined ? { file: hook.secretFile } : null;
}

/** How a reference is named to a person: `$NAME` or the file's path; never what it holds. */
export function describeSecretRef(ref: SecretRef): string {
  return 'env' in ref ? `$${ref.env}` : ref.file;
}
