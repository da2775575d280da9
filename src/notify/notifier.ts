import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { describeSecretRef, type WebhookSpec, webhookSecretRef, webhookUrlRef } from '../manifest/notify-config.js';
import { backoffDelay, backoffPolicy, type BackoffPolicy } from '../retry/backoff-policy.js';
import type { RunEvent } from '../schedule/run/ports/events.js';
import { type Notification, notificationsOf } from './notification.js';
import { type Delivery, Outbox } from './outbox.js';
import { readSecretRef, type SecretRead } from './secret-ref.js';
import { webhookBody, webhookHeaders } from './webhook-request.js';

/** What the notifier reports, for the run's output. */
export type NotifierEvent =
  | { type: 'delivered'; hook: string; event: string; attempts: number }
  | { type: 'delivery-failed'; hook: string; event: string; attempts: number; error: string; retryInMs: number }
  | { type: 'gave-up'; hook: string; event: string; attempts: number; error: string }
  | { type: 'secret-missing'; hook: string; why: string };

export interface NotifierOptions {
  /** The world's scratch dir: the outbox is `<scratchDir>/notify/outbox`. */
  scratchDir: string;
  world: string;
  hooks: readonly WebhookSpec[];
  /** The world's directory: a secret file inside it is refused (agents reach it). */
  worldDir?: string;
  /** Where secrets are read. @default process.env */
  env?: Record<string, string | undefined>;
  /** Waits between tries of a delivery. @default 1 s doubling up to 5 min, a fifth of each at random */
  backoff?: BackoffPolicy;
  /** A delivery older than this is given up. @default 3 days */
  maxAgeMs?: number;
  /** Time for one POST. @default 10 s */
  requestTimeoutMs?: number;
  onEvent?: (event: NotifierEvent) => void;
}

/** The outbox of a world. */
export function outboxDir(scratchDir: string): string {
  return join(scratchDir, 'notify', 'outbox');
}

/**
 * Tells a world's webhooks what happens in it. Each notification for each webhook that wants it
 * becomes a delivery in the outbox before it is first sent; a failed POST (no answer, or not 2xx) is
 * tried again with backoff; deliveries still owed when genesis stops stay in the outbox, and the
 * next notifier on the world (the next `genesis run`) sends them first. So a receiver that is down
 * for a while gets everything once it is back, at least once (the delivery id lets it drop a repeat).
 * Notifying never holds up a run: `notify` returns at once.
 */
export class Notifier {
  private readonly outbox: Outbox;
  private readonly pending = new Map<string, Delivery>();
  private readonly backoff: BackoffPolicy;
  private readonly env: Record<string, string | undefined>;
  private readonly missing = new Set<string>();
  /** Deliveries whose secret is not set here: kept in the outbox, not tried by this notifier. */
  private readonly withheld = new Set<string>();
  private work: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  private constructor(private readonly options: NotifierOptions) {
    this.outbox = new Outbox(outboxDir(options.scratchDir));
    this.backoff = options.backoff ?? backoffPolicy({ initialMs: 1000, maxMs: 300_000, jitter: 0.2 });
    this.env = options.env ?? process.env;
  }

  /** A notifier that has taken up what the outbox still owes (due at once: a restart is a reason to try now). */
  static async open(options: NotifierOptions): Promise<Notifier> {
    const notifier = new Notifier(options);
    for (const delivery of await notifier.outbox.list()) notifier.pending.set(delivery.id, { ...delivery, nextAt: 0 });
    notifier.schedule();
    return notifier;
  }

  /** How many deliveries are owed (in the outbox). */
  get owed(): number {
    return this.pending.size + this.withheld.size;
  }

  /** Turns a run event into deliveries (stored, then sent in the background). */
  notify(event: RunEvent): void {
    const notifications = notificationsOf(event, this.options.world, new Date());
    if (notifications.length === 0 || this.options.hooks.length === 0) return;
    this.enqueue(async () => {
      for (const n of notifications) for (const hook of this.options.hooks) if (hook.events.includes(n.event)) await this.add(hook, n);
      await this.sendDue(false);
    });
  }

  /** Tries every delivery owed once more, now (each within the request timeout); resolves with how many are still owed (kept for the next run). */
  async flush(): Promise<number> {
    this.enqueue(() => this.sendDue(true));
    await this.work;
    return this.owed;
  }

  /** Stops retrying by timer; what is owed stays in the outbox. */
  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
  }

  private async add(hook: WebhookSpec, notification: Notification): Promise<void> {
    const now = Date.now();
    const id = `${String(now).padStart(13, '0')}-${randomBytes(4).toString('hex')}`;
    const delivery: Delivery = {
      id,
      event: notification.event,
      hook: {
        format: hook.format,
        ...(hook.urlEnv !== undefined ? { urlEnv: hook.urlEnv } : {}),
        ...(hook.urlFile !== undefined ? { urlFile: hook.urlFile } : {}),
        ...(hook.secretEnv !== undefined ? { secretEnv: hook.secretEnv } : {}),
        ...(hook.secretFile !== undefined ? { secretFile: hook.secretFile } : {}),
      },
      body: webhookBody(hook.format, notification, id),
      createdAt: now,
      attempts: 0,
      nextAt: now,
      lastError: null,
    };
    await this.outbox.put(delivery);
    this.pending.set(id, delivery);
  }

  private enqueue(step: () => Promise<void>): void {
    this.work = this.work.then(step).catch(() => undefined);
  }

  private schedule(): void {
    clearTimeout(this.timer);
    if (this.closed || this.pending.size === 0) return;
    const next = Math.min(...[...this.pending.values()].map((d) => d.nextAt));
    this.timer = setTimeout(() => this.enqueue(() => this.sendDue(false)), Math.max(0, next - Date.now()));
    // A notifier never keeps the process alive: what is owed at exit waits in the outbox.
    this.timer.unref();
  }

  /** Sends what is due (everything, with `all`), oldest first, one at a time. */
  private async sendDue(all: boolean): Promise<void> {
    for (const delivery of [...this.pending.values()].sort((a, b) => a.createdAt - b.createdAt)) {
      if (!all && delivery.nextAt > Date.now()) continue;
      await this.send(delivery);
    }
    this.schedule();
  }

  private async send(delivery: Delivery): Promise<void> {
    const { url: legacyUrl } = delivery.hook;
    // Only the reference is named in what Genesis prints: the URL itself is the credential.
    const urlRef = legacyUrl === undefined ? webhookUrlRef(delivery.hook) : null;
    const hook = urlRef ? describeSecretRef(urlRef) : 'a webhook from an older outbox';
    const secretRef = webhookSecretRef(delivery.hook);
    const read: SecretRead = urlRef ? await readSecretRef(urlRef, this.env, this.options.worldDir) : { value: legacyUrl! };
    const url: SecretRead = read.value === undefined || /^https?:\/\//.test(read.value) ? read : { missing: `${hook} does not hold an http or https URL` };
    const secret = secretRef ? await readSecretRef(secretRef, this.env, this.options.worldDir) : null;
    // Sent unsigned it would be refused by a receiver that checks, or trusted by one that does not: it waits for a genesis that has the secret.
    const missing = url.missing ?? secret?.missing;
    if (url.value === undefined || missing !== undefined) {
      const why = missing ?? 'no URL';
      if (!this.missing.has(why)) this.options.onEvent?.({ type: 'secret-missing', hook, why });
      this.missing.add(why);
      this.pending.delete(delivery.id);
      this.withheld.add(delivery.id);
      return;
    }
    const attempts = delivery.attempts + 1;
    const error = await post(url.value, delivery, secret?.value ?? null, this.options.requestTimeoutMs ?? 10_000);
    if (error === null) {
      await this.outbox.remove(delivery.id);
      this.pending.delete(delivery.id);
      this.options.onEvent?.({ type: 'delivered', hook, event: delivery.event, attempts });
      return;
    }
    const wait = backoffDelay(this.backoff, attempts, Math.random());
    if (wait === null || Date.now() - delivery.createdAt > (this.options.maxAgeMs ?? 3 * 86_400_000)) {
      await this.outbox.remove(delivery.id);
      this.pending.delete(delivery.id);
      this.options.onEvent?.({ type: 'gave-up', hook, event: delivery.event, attempts, error });
      return;
    }
    const next = { ...delivery, attempts, nextAt: Date.now() + wait, lastError: error };
    this.pending.set(delivery.id, next);
    await this.outbox.put(next);
    this.options.onEvent?.({ type: 'delivery-failed', hook, event: delivery.event, attempts, error, retryInMs: wait });
  }
}

/** One POST; null when the receiver took it (2xx), else what went wrong. */
async function post(url: string, delivery: Delivery, secret: string | null, timeoutMs: number): Promise<string | null> {
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: webhookHeaders({ event: delivery.event, delivery: delivery.id, body: delivery.body, secret }),
      body: delivery.body,
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'error',
    });
    await response.body?.cancel().catch(() => undefined);
    return response.ok ? null : `HTTP ${response.status}`;
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    return cause?.code ?? cause?.message ?? (error as Error).message;
  }
}
