import type { WorldManifest } from '../../../manifest/schema.js';
import { Notifier, type NotifierEvent, outboxDir } from '../../../notify/notifier.js';

/**
 * The notifier of a command that runs a world (`genesis run`), saying on stderr what a person must
 * know of it: a webhook's first failure, a delivery given up, a secret that is not set. Null when
 * the world has no webhooks and nothing is owed from before.
 */
export async function openNotifier(
  where: { scratchDir: string; worldDir: string },
  manifest: WorldManifest,
  say: (line: string) => void,
): Promise<Notifier | null> {
  const notifier = await Notifier.open({ ...where, world: manifest.name, hooks: manifest.notify.webhooks, onEvent: (e) => sayNotifierEvent(e, say) });
  if (manifest.notify.webhooks.length === 0 && notifier.owed === 0) {
    notifier.close();
    return null;
  }
  return notifier;
}

/** At the end of a run: what is still owed is tried once more, and what is left is said to wait for the next run. */
export async function finishNotifying(notifier: Notifier | null, say: (line: string) => void): Promise<void> {
  if (!notifier) return;
  const left = await notifier.flush();
  notifier.close();
  if (left > 0) say(`notify: ${left} notification(s) not delivered yet; kept in ${outboxDir('<world>/genesis')} for the next genesis run`);
}

function sayNotifierEvent(event: NotifierEvent, say: (line: string) => void): void {
  switch (event.type) {
    case 'delivery-failed':
      // Only the first failure of a delivery: a receiver down for an hour would otherwise fill the log.
      if (event.attempts === 1) say(`notify: the webhook in ${event.hook} did not take "${event.event}" (${event.error}); retrying with backoff`);
      return;
    case 'gave-up':
      say(`notify: gave up delivering "${event.event}" to the webhook in ${event.hook} after ${event.attempts} attempts (${event.error})`);
      return;
    case 'secret-missing':
      say(`notify: ${event.why}, so notifications for the webhook in ${event.hook} wait in the outbox; fix that and run genesis again`);
      return;
    case 'delivered':
      return;
  }
}
