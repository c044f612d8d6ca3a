// Issue 14's flake, made deterministic: a webhook attempt to a receiver that never answers must time out even
// when a garbage collection runs while it waits. The attempts' timeout used to be AbortSignal.timeout inside
// AbortSignal.any, which holds its sources only weakly: a major GC (likely in a long full run, rare in a file
// alone) took the timeout signal and its timer, the attempts hung for ever, held every lane of the endpoint,
// and nothing was recorded or retried. Here the GC is forced while the attempts hang.
import { afterEach, before, after, test } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describeEachDatabase } from '../support/databases.js';
import { ALL_WEEK, testInstallation, type TestInstallation, localDateFromToday } from '../support/installation.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { until } from './mail-support.js';
import { addWebhookEndpoint } from '../../src/app/webhooks.js';
import { startWebhookWorker, type WebhookWorker } from '../../src/app/webhook-delivery.js';

// a full collection on demand, without starting the test process with --expose-gc
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

describeEachDatabase('webhook attempt timeout survives garbage collection', (dialect) => {
  let inst: TestInstallation;
  let receiver: WebhookReceiver;
  let worker: WebhookWorker | null = null;

  before(async () => {
    receiver = await WebhookReceiver.start();
  });
  after(() => receiver.down());
  afterEach(async () => {
    await worker?.stop({ graceMs: 0 });
    await inst.close();
  });

  test('attempts hanging at the receiver time out after a GC, are recorded, and are retried', async () => {
    const now = Date.now();
    inst = await testInstallation(dialect, {
      now,
      schedules: [
        {
          name: 'Desk',
          slot_interval_minutes: 15,
          horizon_days: 7,
          capacity: 100,
          weekly_hours: ALL_WEEK([['08:00', '18:00']]),
          reasons: [{ name: 'Talk', duration_minutes: 30 }],
        },
      ],
    });
    const schedule = inst.schedules[0]!;
    const endpoint = await addWebhookEndpoint(inst.db, { url: receiver.url('/hook'), events: ['booking.created'] }, now, true);
    receiver.secrets.set('/hook', endpoint.secret);
    receiver.mode = { hang: true };
    // four deliveries: with a concurrency of 8 they fill the endpoint's four lanes
    for (let i = 0; i < 4; i++) {
      const res = await inst.api({
        method: 'POST',
        url: '/api/bookings',
        payload: {
          schedule: schedule.id,
          reason: schedule.reasons[0]!.id,
          slot: `${localDateFromToday(1)} ${String(9 + i).padStart(2, '0')}:00:00`,
          submission: { email: `p${i}@example.com` },
        },
      });
      assert.equal(res.statusCode, 201, res.body);
    }
    worker = startWebhookWorker({
      db: inst.db,
      giveUpAfterMs: 24 * 3_600_000,
      timeoutMs: 1_500,
      pollIntervalMs: 25,
      retryBaseMs: 100,
      retryCapMs: 100,
    });
    await until('every lane hangs at the receiver', () => receiver.hangingCount >= 4);
    collectGarbage();

    const deliveries = () => inst.db.kysely.selectFrom('webhook_deliveries').selectAll().execute();
    await until('each timeout recorded', async () =>
      (await deliveries()).every((d) => d.attempts >= 1 && /no answer within the timeout/.test(d.last_error ?? '')),
    );
    // the lanes came free: the deliveries are attempted again, and delivered once the receiver answers
    receiver.mode = { answer: 204 };
    await until('all delivered', async () => (await deliveries()).every((d) => d.state === 'delivered'));
    assert.equal(receiver.events('/hook').length >= 8, true, 'four timed out attempts and four retries');
  });
});
