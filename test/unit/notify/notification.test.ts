import { describe, expect, it } from 'vitest';
import { notificationsOf } from '../../../src/notify/notification.js';
import { signBody, webhookBody, webhookHeaders } from '../../../src/notify/webhook-request.js';
import type { RunEvent } from '../../../src/schedule/run/ports/events.js';

const now = new Date('2026-01-02T03:04:05.000Z');
const end = (over: Partial<Extract<RunEvent, { type: 'episode-end' }>>): RunEvent => ({
  type: 'episode-end',
  id: 'ep1',
  task: 'parse',
  attempt: 2,
  outcome: 'accepted',
  reason: null,
  message: null,
  commit: 'abcdef0123456789',
  durationMs: 10,
  ...over,
});

describe('the notifications of run events', () => {
  it('tells of an accepted change with its commit, and of a rejected one with its reason', () => {
    expect(notificationsOf(end({}), 'w', now)).toEqual([
      {
        event: 'accepted',
        world: 'w',
        at: '2026-01-02T03:04:05.000Z',
        task: 'parse',
        episode: 'ep1',
        attempt: 2,
        commit: 'abcdef0123456789',
        reason: null,
        message: null,
        text: 'w: task parse accepted as abcdef012345 (attempt 2)',
      },
    ]);
    const [rejected] = notificationsOf(end({ outcome: 'rejected', reason: 'test-failed', message: '2 tests failed\nmore', commit: null }), 'w', now);
    expect(rejected).toMatchObject({ event: 'rejected', reason: 'test-failed', text: 'w: task parse attempt 2 rejected: test-failed: 2 tests failed' });
  });

  it('tells of a lost worker, of a blocked task, of a spent budget and of every stop', () => {
    expect(notificationsOf(end({ outcome: 'failed', reason: 'worker-lost', message: 'gone' }), 'w', now).map((n) => n.event)).toEqual(['worker-lost']);
    expect(notificationsOf({ type: 'task-blocked', task: 'a', failures: 3, reason: 'check-failed', message: null }, 'w', now)).toMatchObject([
      { event: 'blocked', task: 'a', text: 'w: task a is blocked after 3 failed attempt(s): check-failed' },
    ]);
    const budget = notificationsOf({ type: 'stop', reason: { kind: 'budget', budget: 'maxEpisodes', limit: 4, used: 4 } }, 'w', now);
    expect(budget.map((n) => [n.event, n.text])).toEqual([
      ['budget-spent', 'w: budget maxEpisodes spent (4 of 4)'],
      ['stopped', 'w: the run stopped: budget maxEpisodes spent'],
    ]);
    expect(notificationsOf({ type: 'stop', reason: { kind: 'done' } }, 'w', now).map((n) => n.text)).toEqual(['w: the run stopped: every task is done']);
  });

  it('tells when the world holds its episodes (a usage limit, a model that went away), until when and why', () => {
    const message = 'the model endpoint http://127.0.0.1:8080 does not accept connections (ECONNREFUSED); the world waits 5 s for it';
    expect(notificationsOf({ type: 'hold', untilMs: Date.parse('2026-01-02T03:04:10.000Z'), message }, 'w', now)).toEqual([
      { event: 'held', world: 'w', at: '2026-01-02T03:04:05.000Z', message, text: `w: no episode starts before 2026-01-02T03:04:10.000Z: ${message}` },
    ]);
  });

  it('says nothing of phases, progress and abandoned episodes', () => {
    expect(notificationsOf({ type: 'episode-phase', id: 'e', task: 't', phase: 'gate' }, 'w', now)).toEqual([]);
    expect(notificationsOf({ type: 'progress', done: 0, tasks: 1, running: [], accepted: 0, rejected: 0, failed: 0 }, 'w', now)).toEqual([]);
    expect(notificationsOf(end({ outcome: 'abandoned', reason: 'aborted' }), 'w', now)).toEqual([]);
  });
});

describe('a webhook request', () => {
  it('signs the body with HMAC-SHA256 of the secret (the RFC 4231-style known answer)', () => {
    expect(signBody('The quick brown fox jumps over the lazy dog', 'key')).toBe('sha256=f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8');
    const headers = webhookHeaders({ event: 'accepted', delivery: 'd1', body: '{}', secret: 'key' });
    expect(headers['x-genesis-signature']).toBe(signBody('{}', 'key'));
    expect(headers['x-genesis-event']).toBe('accepted');
    expect(webhookHeaders({ event: 'accepted', delivery: 'd1', body: '{}', secret: null })).not.toHaveProperty('x-genesis-signature');
  });

  it('carries the delivery id in a JSON body, and only the line in a Slack one', () => {
    const [n] = notificationsOf(end({}), 'w', now);
    expect(JSON.parse(webhookBody('json', n!, 'd1'))).toMatchObject({ delivery: 'd1', event: 'accepted', task: 'parse' });
    expect(JSON.parse(webhookBody('slack', n!, 'd1'))).toEqual({ text: 'w: task parse accepted as abcdef012345 (attempt 2)' });
  });
});
