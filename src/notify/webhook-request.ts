import { createHmac } from 'node:crypto';
import type { WebhookSpec } from '../manifest/notify-config.js';
import type { Notification } from './notification.js';

/** The header the signature travels in: `sha256=<hex of HMAC-SHA256(secret, body)>`, as GitHub signs its webhooks. */
export const SIGNATURE_HEADER = 'X-Genesis-Signature';

/** The body a webhook of this format gets: Genesis's own JSON, or Slack's `{ text }`. */
export function webhookBody(format: WebhookSpec['format'], notification: Notification, delivery: string): string {
  if (format === 'slack') return JSON.stringify({ text: notification.text });
  return JSON.stringify({ delivery, ...notification });
}

/** The signature of a body, checked by a receiver that holds the same secret (compare in constant time). */
export function signBody(body: string, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** The headers of one POST: the event and delivery id (a receiver drops a retry it already took), and the signature when the hook has a secret. */
export function webhookHeaders(input: { event: string; delivery: string; body: string; secret: string | null }): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': 'genesis-webhook',
    'x-genesis-event': input.event,
    'x-genesis-delivery': input.delivery,
    ...(input.secret === null ? {} : { [SIGNATURE_HEADER.toLowerCase()]: signBody(input.body, input.secret) }),
  };
}
