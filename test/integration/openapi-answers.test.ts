// The answers keep to the document, on SQLite and PostgreSQL: every error the calls give (each 404 cause,
// each malformed id, the booking's 400s, 401, 413, 415, 429, 503) has a status the operation lists and a
// message its response lists. Validation stayed as strict as the contract wants while the document calls
// ids integers and submission values scalars. The local-time calls name the installation's time zone.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { setApiEnabled, setOperatorSetting } from '../../src/app/installation.js';
import { describeEachDatabase } from '../support/databases.js';
import { deskSchedule, testInstallation, type TestInstallation } from '../support/installation.js';

// Monday 2026-06-01 08:00 in Berlin (06:00Z)
const NOW = Date.UTC(2026, 5, 1, 6, 0);

describeEachDatabase('answers match the OpenAPI document', (dialect) => {
  let inst: TestInstallation;
  let doc: any;
  let s: number;
  let r: number;

  before(async () => {
    inst = await testInstallation(dialect, { now: NOW, schedules: [deskSchedule({ reasons: [{ name: 'Talk', duration_minutes: 60 }] })] });
    doc = (await inst.api({ method: 'GET', url: '/api/openapi.json', token: null })).json();
    s = inst.schedules[0]!.id;
    r = inst.schedules[0]!.reasons[0]!.id;
  });
  after(() => inst.close());

  /** The messages the document lists for this answer: an enum, or (an open list) the examples' messages. */
  function listed(method: string, path: string, status: number): string[] {
    const response = doc.paths[path]?.[method]?.responses[String(status)];
    assert.ok(response, `${method.toUpperCase()} ${path} does not document ${status}`);
    const media = response.content['application/json'];
    const enumerated: string[] | undefined = media.schema.allOf?.[1]?.properties?.error?.enum;
    return enumerated ?? Object.values(media.examples as Record<string, { value: { error: string } }>).map((e) => e.value.error);
  }

  async function expectDocumented(method: 'GET' | 'POST', url: string, status: number, message: string, extra: object = {}) {
    const res = await inst.api({ method, url, ...extra });
    assert.equal(res.statusCode, status, `${method} ${url}: ${res.body}`);
    assert.equal(res.json().error, message, `${method} ${url}`);
    const path = new URL(url, 'http://x').pathname.replace(/^\/api/, '');
    assert.ok(listed(method.toLowerCase(), path, status).includes(message), `${method} ${path} ${status} does not list "${message}"`);
    return res;
  }

  test('ids are integers in the document, yet 01, 1.0, 1e3, +1, " 1" and 1 followed by a space are still 404', async () => {
    assert.equal(doc.paths['/reasons'].get.parameters[0].schema.type, 'integer');
    for (const bad of ['01', '1.0', '1e3', '+1', ' 1', '1 ', '0', '-1', '']) {
      const id = encodeURIComponent(bad);
      await expectDocumented('GET', `/api/reasons?schedule=${id}`, 404, 'Schedule not found');
      await expectDocumented('GET', `/api/days?schedule=${s}&reason=${id}`, 404, 'Reason not found');
      await expectDocumented('GET', `/api/slots?schedule=${id}&reason=${r}&day=2026-06-02`, 404, 'Schedule not found');
      await expectDocumented('GET', `/api/forms?schedule=${s}&reason=${id}&slot=2026-06-02%2009:00:00`, 404, 'Reason not found');
    }
    // and the well-formed ones work
    assert.equal((await inst.api({ method: 'GET', url: `/api/days?schedule=${s}&reason=${r}` })).statusCode, 200);
  });

  test('every 404 of the GET calls carries a message its response lists', async () => {
    await expectDocumented('GET', '/api/reasons', 404, 'Schedule not found');
    await expectDocumented('GET', '/api/reasons?schedule=999', 404, 'Schedule not found');
    await expectDocumented('GET', `/api/days?schedule=${s}`, 404, 'Reason not found');
    await expectDocumented('GET', `/api/days?schedule=${s}&reason=999`, 404, 'Reason not found');
    await expectDocumented('GET', `/api/slots?schedule=${s}&reason=${r}&day=2026-02-30`, 404, 'Day not found');
    await expectDocumented('GET', `/api/slots?schedule=${s}&reason=${r}&day=2027-06-02`, 404, 'Day not found');
    await expectDocumented('GET', `/api/slots?schedule=${s}&reason=${r}&day=2026-6-2`, 404, 'Day not found');
    await expectDocumented('GET', `/api/forms?schedule=${s}&reason=${r}&slot=2026-06-02%2009:10:00`, 404, 'Time not available');
    await expectDocumented('GET', `/api/forms?schedule=${s}&reason=${r}&slot=2026-06-02T09:00:00`, 404, 'Time not available');
  });

  test('POST /bookings: each 400, 404, 413 and 415 carries a message its response lists; validation is as strict as it was', async () => {
    const json = { 'content-type': 'application/json' };
    const post = (body: unknown, status: number, message: string, field?: string) =>
      expectDocumented('POST', '/api/bookings', status, message, {
        payload: typeof body === 'string' ? body : JSON.stringify(body),
        headers: json,
      }).then((res) => assert.equal(res.json().field, field, JSON.stringify(body)));
    const good = { schedule: s, reason: r, slot: '2026-06-02 09:00:00', submission: { email: 'ada@example.com' } };
    await post('{"schedule":', 400, 'Invalid JSON');
    await post('', 400, 'Invalid JSON: empty body');
    await post([], 400, 'Invalid request: the body must be a JSON object');
    await post({ ...good, slot: undefined }, 400, 'Invalid request: slot is required', 'slot');
    await post({ ...good, schedule: '1' }, 400, 'Invalid request: schedule must be an integer >= 1', 'schedule');
    await post({ ...good, reason: 1.5 }, 400, 'Invalid request: reason must be an integer >= 1', 'reason');
    await post(
      { ...good, slot: '2026-06-02 9:00' },
      400,
      'Invalid request: slot must be a string YYYY-MM-DD HH:MM:SS of exactly 19 characters',
      'slot',
    );
    await post({ ...good, submission: [] }, 400, 'Invalid request: submission must be an object', 'submission');
    await post({ ...good, submission: {} }, 400, 'Field is required', 'email');
    await post({ ...good, submission: { email: 'ada' } }, 400, 'Must be an e-mail address', 'email');
    // the document says string | number | boolean; a non-scalar still answers what it answered: the field's own rule
    await post({ ...good, submission: { email: { address: 'ada@example.com' } } }, 400, 'Must be a string', 'email');
    await post({ ...good, submission: { email: ['ada@example.com'] } }, 400, 'Must be a string', 'email');
    await post({ ...good, schedule: 999 }, 404, 'Schedule not found');
    await post({ ...good, reason: 999 }, 404, 'Reason not found');
    await post({ ...good, slot: '2026-06-02 09:10:00' }, 404, 'Time not available');
    await expectDocumented('POST', '/api/bookings', 415, 'Unsupported Media Type: send Content-Type: application/json', {
      payload: JSON.stringify(good),
      headers: { 'content-type': 'text/plain' },
    });
    await expectDocumented('POST', '/api/bookings', 413, 'Payload Too Large', {
      payload: JSON.stringify({ ...good, submission: { notes: 'x'.repeat(70_000) } }),
      headers: json,
    });
    // keys the form does not define are ignored, whatever their value
    const booked = await inst.api({
      method: 'POST',
      url: '/api/bookings',
      payload: JSON.stringify({ ...good, submission: { ...good.submission, extra: { nested: [1] } } }),
      headers: json,
    });
    assert.equal(booked.statusCode, 201, booked.body);
    await post(good, 404, 'Time not available');
  });

  test('401, 429 and 503 carry the messages their responses list', async () => {
    await expectDocumented('GET', '/api/schedules', 401, 'Unauthorized', { token: null });
    await setOperatorSetting(inst.db, 'api.rate_limit_per_minute', '1');
    try {
      inst.clock.now += 120_000;
      await inst.api({ method: 'GET', url: '/api/schedules' });
      const limited = await expectDocumented('GET', `/api/reasons?schedule=${s}`, 429, 'Too Many Requests');
      assert.match(String(limited.headers['retry-after']), /^[1-9][0-9]*$/);
    } finally {
      await setOperatorSetting(inst.db, 'api.rate_limit_per_minute', '300');
      inst.clock.now += 120_000;
    }
    await setApiEnabled(inst.db, false);
    try {
      await expectDocumented('GET', `/api/slots?schedule=${s}&reason=${r}&day=2026-06-02`, 503, 'API disabled');
    } finally {
      await setApiEnabled(inst.db, true);
    }
  });

  test('Time-Zone: the installation’s zone on /days, /slots and /forms, and the next request sees a change', async () => {
    const zoneOf = async (url: string) => {
      const res = await inst.api({ method: 'GET', url });
      assert.equal(res.statusCode, 200, res.body);
      return res.headers['time-zone'];
    };
    assert.equal(await zoneOf(`/api/days?schedule=${s}&reason=${r}`), 'Europe/Berlin');
    assert.equal(await zoneOf(`/api/slots?schedule=${s}&reason=${r}&day=2026-06-03`), 'Europe/Berlin');
    assert.equal(await zoneOf(`/api/forms?schedule=${s}&reason=${r}&slot=2026-06-03%2009:00:00`), 'Europe/Berlin');
    assert.equal(await zoneOf('/api/schedules'), undefined, 'only the calls with local times carry it');
    await setOperatorSetting(inst.db, 'installation.timezone', 'America/New_York');
    try {
      assert.equal(await zoneOf(`/api/days?schedule=${s}&reason=${r}`), 'America/New_York');
    } finally {
      await setOperatorSetting(inst.db, 'installation.timezone', 'Europe/Berlin');
    }
  });
});
