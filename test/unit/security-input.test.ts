// Issue 10: the input rules of core and the single-line rendering of mail, without I/O.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isEmailAddress, validateSubmission } from '../../src/core/forms/form-fields.js';
import { parseFormField, parseImportFile } from '../../src/core/schedules/schedule-definition.js';
import { parseOperatorSetting, parseSmtpUrl } from '../../src/core/settings.js';
import { smtpUrlFromFields, type SmtpFields } from '../../src/core/smtp-fields.js';
import { loadConfig, trustProxy } from '../../src/config.js';
import { renderMessage, type MessageSource } from '../../src/mail/templates.js';
import { field } from '../support/form-field.js';

const STORED = 'smtp://booking%40example.com:s3cret@mail.example.com:587/?requireTLS=true';

test('#1 the masked SMTP password is kept only while host, port, security and user are unchanged', () => {
  const shown: SmtpFields = {
    host: 'mail.example.com',
    port: '587',
    security: 'starttls',
    user: 'booking@example.com',
    password: '********',
  };
  assert.equal(smtpUrlFromFields(shown, STORED), 'smtp://booking%40example.com:s3cret@mail.example.com:587?requireTLS=true');
  for (const changed of [
    { security: 'none' },
    { security: 'tls' },
    { host: 'attacker.example.net' },
    { port: '25' },
    { user: 'other@example.com' },
  ] as const) {
    assert.throws(() => smtpUrlFromFields({ ...shown, ...changed }, STORED), /type the password again/, JSON.stringify(changed));
  }
  // nothing stored, or a stored URL without a password: the mask stands for nothing
  assert.throws(() => smtpUrlFromFields(shown, ''), /type the password again/);
  assert.throws(() => smtpUrlFromFields(shown, 'smtp://booking%40example.com@mail.example.com:587'), /type the password again/);
});

test('#1 an SMTP URL takes only the documented options (requireTLS, ignoreTLS), at save time and in SMTP_URL', () => {
  assert.equal(parseSmtpUrl(STORED), STORED);
  assert.equal(parseSmtpUrl('smtp://127.0.0.1:2525/?ignoreTLS=true'), 'smtp://127.0.0.1:2525/?ignoreTLS=true');
  for (const bad of [
    'smtp://u:p@mail.example.com:587/?proxy=http://elsewhere.example:8080',
    'smtp://u:p@mail.example.com:587/?tls.rejectUnauthorized=false',
    'smtp://u:p@mail.example.com:587/?localAddress=10.0.0.1',
    'smtp://u:p@mail.example.com:587/?requireTLS=yes',
    'smtp://u:p@mail.example.com:587/?requireTLS=true&requireTLS=false',
    'smtp://u:p@mail.example.com:587/some/path',
  ]) {
    assert.throws(() => parseSmtpUrl(bad), /option|path/, bad);
    assert.throws(() => loadConfig({ SMTP_URL: bad }), /^Error: SMTP_URL: /, bad);
  }
  // the fields cannot smuggle an option in: the host is a host name, nothing more
  assert.throws(
    () => smtpUrlFromFields({ host: 'mail.example.com/?proxy=http://x', port: '', security: 'starttls', user: '', password: '' }, STORED),
    /host name/,
  );
});

test('#6 TRUST_PROXY: unset trusts none, 1 is one hop, addresses or ranges are the proxies', () => {
  assert.equal(trustProxy(undefined), false);
  assert.equal(trustProxy('0'), false);
  assert.equal(trustProxy('1'), 1);
  assert.equal(trustProxy('2'), 2);
  assert.deepEqual(trustProxy('10.0.0.1, 192.168.0.0/16,::1'), ['10.0.0.1', '192.168.0.0/16', '::1']);
  assert.equal(trustProxy('yes'), false);
  assert.equal(trustProxy('true'), false, 'never "every hop"');
  assert.equal(loadConfig({ TRUST_PROXY: '1' }).trustProxy, 1);
});

const FORM = [field('first_name'), field('email', { inputType: 'email', required: true }), field('notes', { formType: 'textarea' })];

test('#7 e-mail addresses: no controls, DEL, bidi controls, non-ASCII or encoded words', () => {
  assert.ok(isEmailAddress('ada.lovelace+tag@example.com'));
  for (const bad of [
    'a\x00b@example.com',
    'a\x7fb@example.com',
    'a\u202eb@example.com',
    'a\u2066b@example.com',
    'a\x85b@example.com',
    'é@example.com',
    '=?utf-8?q?x?=@example.com',
  ])
    assert.equal(isEmailAddress(bad), false, JSON.stringify(bad));
});

test('#7 control characters in a submission: 400 with the field; line breaks only in a textarea', () => {
  const ok = { email: 'ada@example.com' };
  for (const [value, message] of [
    ['Ada\x00', /control/],
    ['Ada\x7f', /control/],
    ['Ada\x9b', /control/],
    ['\u202eadA', /control/],
    ['Ada\u2069', /control/],
    ['Ada\r\nBcc: x@example.com', /single line/],
    ['Ada\u2028x', /single line/],
    ['Ada\tLovelace', /single line/],
  ] as const) {
    const result = validateSubmission(FORM, { ...ok, first_name: value });
    assert.equal(result.ok, false, JSON.stringify(value));
    if (!result.ok) {
      assert.equal(result.field, 'first_name');
      assert.match(result.message, message);
    }
  }
  const notes = validateSubmission(FORM, { ...ok, notes: 'line one\r\nline two\ttabbed' });
  assert.equal(notes.ok, true);
  const nulInNotes = validateSubmission(FORM, { ...ok, notes: 'line one\x00' });
  assert.deepEqual(nulInNotes, { ok: false, field: 'notes', message: 'Must not contain control characters' });
});

test('#7 control characters in schedule names, labels, options and descriptions are refused (admin area and import)', () => {
  const schedule = (patch: Record<string, unknown>) => ({
    schedules: [{ name: 'Desk', reasons: [{ name: 'Visit', duration_minutes: 30 }], ...patch }],
  });
  assert.throws(() => parseImportFile(schedule({ name: 'Desk\x00' })), /control/);
  assert.throws(() => parseImportFile(schedule({ name: 'Desk\nTwo' })), /single line/);
  assert.throws(() => parseImportFile(schedule({ reasons: [{ name: 'Visit', description: 'a\u202e', duration_minutes: 30 }] })), /control/);
  assert.doesNotThrow(() => parseImportFile(schedule({ reasons: [{ name: 'Visit', description: 'two\nlines', duration_minutes: 30 }] })));
  assert.throws(() => parseOperatorSetting('installation.name', 'Desk\r\nX'), /single line/);
  assert.throws(() => parseOperatorSetting('installation.name', 'Desk\u0000'), /control/);
  assert.throws(() => parseSmtpUrl('smtp://mail.example.com:25/?requireTLS=tr\nue'), /control/);
  assert.throws(() => parseFormField('team', { label: 'Team', form_type: 'select', options: ['Red\r\nBcc'] }, 'form.team'), /single line/);
});

test('#10 __proto__, constructor and prototype are refused as field names, in the admin area and the import', () => {
  for (const name of ['__proto__', 'constructor', 'prototype']) {
    assert.throws(() => parseFormField(name, { label: 'x' }, `form.${name}`), /reserved/, name);
    const file = JSON.parse(
      `{"schedules":[{"name":"Desk","form":{"email":{"input_type":"email","required":true},"${name}":{"label":"x"}}}]}`,
    ) as unknown;
    assert.throws(() => parseImportFile(file), /reserved/, name);
  }
  // and submission handling keys by name without touching a prototype, whatever the form holds
  const result = validateSubmission(
    [field('__proto__'), field('email', { inputType: 'email' })],
    JSON.parse('{"__proto__":"x","email":"a@example.com"}'),
  );
  assert.ok(result.ok);
  if (result.ok) {
    assert.equal(Object.getPrototypeOf(result.answers), Object.prototype);
    assert.deepEqual(Object.keys(result.answers), ['__proto__', 'email']);
  }
});

const SOURCE: MessageSource = {
  kind: 'booking_notification',
  installation: { name: 'Desk\r\nX-Evil: 1', timezone: 'Europe/Berlin', notifyEmail: 'desk@example.com' },
  contact: { phone: '', address: '', website: '' },
  booking: {
    detailsId: 'abc',
    start: Date.UTC(2026, 5, 2, 7),
    end: Date.UTC(2026, 5, 2, 8),
    createdAt: Date.UTC(2026, 5, 1),
    cancelledAt: null,
    answers: {
      first_name: 'Eve\r\nBcc: victim@example.org',
      last_name: 'X\rTo: other@example.org',
      notes: 'one\rBcc: nested@example.org\ntwo',
    },
  },
  scheduleName: 'Main\u2028Cc: a@example.org',
  reason: { name: 'Visit\nSubject: hi', durationMinutes: 60 },
  form: [
    { name: 'first_name', label: 'First\nname' },
    { name: 'notes', label: 'Notes' },
  ],
  customer: { firstName: 'Eve\r\nBcc: victim@example.org', lastName: 'X\rTo: other@example.org', email: 'eve@example.com\r\nX: y' },
};

test('#9 single-line values stay single-line in the text, HTML and .ics of every message (values stored before the input rules)', () => {
  for (const kind of ['booking_confirmation', 'booking_notification', 'booking_cancellation'] as const) {
    const m = renderMessage({
      ...SOURCE,
      kind,
      booking: { ...SOURCE.booking, cancelledAt: kind === 'booking_cancellation' ? SOURCE.booking.end : null },
    });
    for (const line of m.text.split(/\r\n|[\r\n\u2028\u2029]/))
      // an answer's own line breaks continue indented under its label; nothing starts a line of its own
      assert.doesNotMatch(line, /^(Bcc|To|Cc|X-Evil|Subject|X):/i, `${kind}: ${JSON.stringify(line)}`);
    assert.doesNotMatch(m.html, /[\r\u2028]|Desk\n|Visit\n|<p>Eve\n/);
    assert.match(m.text, /Eve Bcc: victim@example\.org|Hello Eve Bcc: victim@example\.org,/);
    const unfolded = m.calendar.content.replace(/\r\n /g, '');
    for (const line of unfolded.split('\r\n')) {
      assert.doesNotMatch(line, /[\x00-\x1f\x7f]/, `${kind}: control in .ics line ${JSON.stringify(line)}`);
      assert.doesNotMatch(line, /^(Bcc|To|Cc|X-Evil|Subject|X):/i);
    }
    assert.match(
      unfolded,
      /\r\nATTENDEE;CN="Eve Bcc: victim@example\.org X To: other@example\.org";ROLE=REQ-PARTICIPANT:mailto:eve@example\.comX:y\r\n/,
    );
    assert.doesNotMatch(m.subject, /[\r\n]/);
  }
  // a multi-line answer keeps its lines, each indented under its label
  const notification = renderMessage(SOURCE);
  assert.match(notification.text, /\n {2}Notes: one\n {4}Bcc: nested@example\.org\n {4}two\n/);
});

test('#2 the schedule form caps its hours and exceptions texts: 120,000 "-" are refused by length, beside the field', async () => {
  const { scheduleFromForm, FormProblems } = await import('../../src/http/admin/schedule-form.js');
  const dashes = '-'.repeat(120_000);
  const settings = {
    slot_interval_minutes: '15',
    min_notice_minutes: '0',
    horizon_days: '60',
    capacity: '1',
    buffer_before_minutes: '0',
    buffer_after_minutes: '0',
  };
  assert.throws(
    () => scheduleFromForm({ ...settings, name: 'Desk', 'weekly_hours.mon': dashes }),
    (e: Error) => e instanceof FormProblems && /at most 2000/.test(e.problems['weekly_hours.mon'] ?? ''),
  );
  assert.throws(
    () => scheduleFromForm({ ...settings, name: 'Desk', exceptions: `2026-12-24 ${dashes}` }),
    (e: Error) => e instanceof FormProblems && /at most 16000/.test(e.problems.exceptions ?? ''),
  );
});

test('#3 the sign-in throttle counts an IPv6 client by its /64, an IPv4 client by its address', async () => {
  const { clientNetwork } = await import('../../src/app/admin-auth.js');
  assert.equal(clientNetwork('203.0.113.7'), '203.0.113.7');
  assert.equal(clientNetwork('::ffff:203.0.113.7'), '203.0.113.7');
  assert.equal(clientNetwork('2001:db8:1:2::5'), '2001:db8:1:2::/64');
  assert.equal(clientNetwork('2001:0db8:0001:0002:aaaa:bbbb:cccc:dddd'), '2001:db8:1:2::/64');
  assert.equal(clientNetwork('2001:db8::1'), '2001:db8:0:0::/64');
  assert.equal(clientNetwork('::1'), '0:0:0:0::/64');
});
