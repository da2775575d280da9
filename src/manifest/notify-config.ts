import { z } from 'zod';

/**
 * What a webhook can be told, one name per kind of moment a person may want to hear about:
 * a change landed or was refused, a task gave up, a change waits for a person, a budget ran out,
 * a run ended, a worker vanished with an episode.
 */
export const NOTIFY_EVENTS = ['accepted', 'rejected', 'blocked', 'awaiting-review', 'budget-spent', 'stopped', 'worker-lost', 'held'] as const;
export type NotifyEventName = (typeof NOTIFY_EVENTS)[number];

const webhook = z
  .object({
    url: z
      .string()
      .url('an http or https URL, e.g. "https://hooks.slack.com/services/…" or "http://127.0.0.1:9000/hook"')
      .refine((u) => /^https?:\/\//.test(u), 'an http or https URL')
      .describe('where each notification is POSTed (JSON)'),
    events: z
      .array(z.enum(NOTIFY_EVENTS))
      .min(1, 'name at least one event, or remove the webhook')
      .default([...NOTIFY_EVENTS])
      .describe('which notifications this webhook gets: accepted, rejected, blocked, awaiting-review, budget-spent, stopped, worker-lost; default: all'),
    secretEnv: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'the name of an environment variable')
      .optional()
      .describe(
        'variable holding the secret each body is signed with (HMAC-SHA256, header X-Genesis-Signature: sha256=<hex>); while it is unset, deliveries wait in the outbox',
      ),
    format: z
      .enum(['json', 'slack'])
      .default('json')
      .describe("json: Genesis's own payload; slack: { text } as Slack-compatible incoming webhooks (Slack, Mattermost, Rocket.Chat) take it"),
  })
  .strict();

export const notifyConfig = z
  .object({
    webhooks: z
      .array(webhook)
      .default([])
      .describe('webhooks told of what happens in the world; a failed delivery is retried with backoff, also by the next genesis run'),
  })
  .strict();

export type WebhookSpec = z.output<typeof webhook>;
