// Webhooks without I/O: what an endpoint URL and event list may be, and the signature, checked by the
// receiver's snippet of docs/webhooks.md and by the Standard Webhooks reference library, including forged,
// tampered and replayed requests; and that the docs quote the snippet the tests run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Webhook } from 'standardwebhooks';
import { InvalidInput } from '../../src/core/errors.js';
import { newWebhookSecret, parseWebhookEvents, parseWebhookUrl, webhookHeaders, WEBHOOK_EVENTS } from '../../src/core/webhooks.js';
import { verifyWebhook } from '../support/verify-webhook.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

test('endpoint URLs: http and https only, no credentials, fragment, spaces or control characters', () => {
  assert.equal(parseWebhookUrl(' https://example.com/hook?x=1 '), 'https://example.com/hook?x=1');
  // the operator's own network is allowed on purpose (docs/security.md)
  assert.equal(parseWebhookUrl('http://10.0.0.5:8080/in'), 'http://10.0.0.5:8080/in');
  assert.equal(parseWebhookUrl('http://[::1]:9000/'), 'http://[::1]:9000/');
  const refused: [string, RegExp][] = [
    ['', /required/],
    ['ftp://example.com/', /https:\/\/ or http:\/\//],
    ['javascript:alert(1)', /https:\/\/ or http:\/\//],
    ['file:///etc/passwd', /https:\/\/ or http:\/\//],
    ['https://user:pass@example.com/', /user name or password/],
    ['https://user@example.com/', /user name or password/],
    ['https://example.com/a#b', /fragment/],
    ['https://example.com/a b', /spaces or control/],
    ['https://example.com/\u0000', /spaces or control/],
    ['https://example.com/\u202e', /spaces or control/],
    ['https://example.com/\n', /spaces or control/],
    ['example.com/hook', /not a URL/],
    [`https://example.com/${'a'.repeat(2000)}`, /longer than 2000/],
  ];
  for (const [url, reason] of refused) {
    assert.throws(
      () => parseWebhookUrl(url),
      (e: unknown) => e instanceof InvalidInput && reason.test(e.message),
      JSON.stringify(url),
    );
  }
});

test('event lists: default all, known names only, at least one', () => {
  assert.deepEqual(parseWebhookEvents(undefined), [...WEBHOOK_EVENTS]);
  assert.deepEqual(parseWebhookEvents('booking.cancelled, booking.created,booking.cancelled'), ['booking.created', 'booking.cancelled']);
  assert.throws(() => parseWebhookEvents('booking.created,booking.moved'), /unknown event "booking.moved"/);
  assert.throws(() => parseWebhookEvents(''), /at least one event/);
  assert.throws(() => parseWebhookEvents(' , '), /at least one event/);
});

test('secrets: "whsec_" and 32 random bytes in base64', () => {
  const a = newWebhookSecret();
  assert.match(a, /^whsec_[A-Za-z0-9+/]{43}=$/);
  assert.equal(Buffer.from(a.slice(6), 'base64').length, 32);
  assert.notEqual(a, newWebhookSecret());
});

test('signatures: the snippet and the Standard Webhooks library accept ours, and reject forgeries and replays', () => {
  const secret = newWebhookSecret();
  const now = Math.floor(Date.now() / 1000);
  const body = JSON.stringify({
    id: 'evt_1',
    type: 'booking.created',
    created_at: new Date().toISOString(),
    data: { booking: { booking_id: 1 } },
  });
  const headers = webhookHeaders(secret, 'evt_1', now, body);
  assert.match(headers['webhook-signature']!, /^v1,[A-Za-z0-9+/]{43}=$/);

  assert.equal(verifyWebhook(secret, headers, body, now).id, 'evt_1');
  assert.deepEqual(new Webhook(secret).verify(body, headers), JSON.parse(body));
  // the library computes the same signature
  assert.equal(new Webhook(secret).sign('evt_1', new Date(now * 1000), body), headers['webhook-signature']);

  const rejectedByBoth = (what: string, s: string, h: Record<string, string>, b: string, at = now) => {
    assert.throws(() => verifyWebhook(s, h, b, at), Error, `snippet: ${what}`);
    if (at === now) assert.throws(() => new Webhook(s).verify(b, h), Error, `library: ${what}`);
  };
  rejectedByBoth('another secret', newWebhookSecret(), headers, body);
  rejectedByBoth('a tampered body', secret, headers, body.replace('"booking_id":1', '"booking_id":2'));
  rejectedByBoth('another event id', secret, { ...headers, 'webhook-id': 'evt_2' }, body);
  rejectedByBoth('a moved timestamp', secret, { ...headers, 'webhook-timestamp': String(now + 1) }, body);
  rejectedByBoth('a signature made up', secret, { ...headers, 'webhook-signature': `v1,${Buffer.alloc(32).toString('base64')}` }, body);
  rejectedByBoth('no signature', secret, { ...headers, 'webhook-signature': '' }, body);
  // a genuine request replayed later than the tolerance
  assert.throws(() => verifyWebhook(secret, headers, body, now + 6 * 60), /timestamp outside the tolerance/);
  const old = webhookHeaders(secret, 'evt_1', now - 6 * 60, body);
  assert.throws(() => new Webhook(secret).verify(body, old), /too old/);
  // a body signed for another event id does not pass as that event
  const relabelled = webhookHeaders(secret, 'evt_9', now, body);
  assert.throws(() => verifyWebhook(secret, relabelled, body, now), /does not match/);
});

test('docs/webhooks.md quotes the verification snippet the tests run, word for word', () => {
  const doc = readFileSync(`${root}docs/webhooks.md`, 'utf8');
  const snippet = readFileSync(`${root}test/support/verify-webhook.ts`, 'utf8');
  const blocks = [...doc.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]);
  assert.ok(blocks.includes(snippet), 'a ```ts block of docs/webhooks.md equals test/support/verify-webhook.ts');
});
