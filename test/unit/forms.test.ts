import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_FORM, validateSubmission, type FormField } from '../../src/core/forms/form-fields.js';
import { field } from '../support/form-field.js';

const FORM: FormField[] = [
  field('first_name', { required: true }),
  field('email', { inputType: 'email', required: true }),
  field('phone', { inputType: 'tel' }),
  field('age', { inputType: 'number' }),
  field('born', { inputType: 'date' }),
  field('team', { formType: 'select', options: ['Red', 'Blue'] }),
  field('terms', { formType: 'checkbox', required: true }),
  field('newsletter', { formType: 'checkbox' }),
  field('password', { required: true }),
];

const ok = { first_name: 'Ada', email: 'ada@example.com', terms: true };

test('the first failing field in form order wins, with its message', () => {
  const cases: [Record<string, unknown>, string, string | RegExp][] = [
    [{}, 'first_name', 'Field is required'],
    [{ first_name: '  ', email: 'x' }, 'first_name', 'Field is required'],
    [{ first_name: 'Ada' }, 'email', 'Field is required'],
    [{ first_name: 'Ada', email: null }, 'email', 'Field is required'],
    [{ ...ok, email: 'not-an-address' }, 'email', /e-mail/],
    [{ ...ok, email: 'a@b' }, 'email', /e-mail/],
    [{ ...ok, email: 'a@example.com\r\nBcc: x@example.com' }, 'email', /e-mail/],
    [{ ...ok, phone: 'call me' }, 'phone', /phone/],
    [{ ...ok, phone: '+1 2' }, 'phone', /phone/],
    [{ ...ok, age: 'old' }, 'age', /number/],
    [{ ...ok, born: '2026-02-30' }, 'born', /date/],
    [{ ...ok, team: 'Green' }, 'team', /options/],
    [{ ...ok, terms: false }, 'terms', 'Field is required'],
    [{ first_name: 'Ada', email: 'ada@example.com' }, 'terms', 'Field is required'],
    [{ ...ok, terms: 'yes' }, 'terms', /true or false/],
    [{ ...ok, first_name: 'x'.repeat(1001) }, 'first_name', /1000/],
    [{ ...ok, first_name: true }, 'first_name', /string/],
    [{ ...ok, first_name: { a: 1 } }, 'first_name', /string/],
  ];
  for (const [submission, name, message] of cases) {
    const result = validateSubmission(FORM, submission);
    assert.equal(result.ok, false, JSON.stringify(submission));
    if (result.ok) continue;
    assert.equal(result.field, name, JSON.stringify(submission));
    if (typeof message === 'string') assert.equal(result.message, message);
    else assert.match(result.message, message);
  }
});

test('valid values are kept; numbers become text where text is expected; unknown keys and password are dropped', () => {
  const result = validateSubmission(FORM, {
    ...ok,
    phone: 5550100,
    age: '42.5',
    born: '1990-12-31',
    team: 'Blue',
    newsletter: false,
    password: 'secret',
    extra: 'dropped',
    email: ' ada@example.com ',
  });
  assert.deepEqual(result, {
    ok: true,
    answers: {
      first_name: 'Ada',
      email: 'ada@example.com',
      phone: '5550100',
      age: '42.5',
      born: '1990-12-31',
      team: 'Blue',
      terms: true,
      newsletter: false,
    },
  });
  assert.deepEqual(validateSubmission(FORM, { ...ok, age: 7 }).ok, true);
  assert.equal(validateSubmission(FORM, { ...ok, first_name: 'x'.repeat(1000) }).ok, true);
});

test('the password field is never required, even when the operator marked it so', () => {
  assert.equal(validateSubmission(FORM, ok).ok, true);
});

test('the default form needs only an e-mail address', () => {
  assert.deepEqual(validateSubmission(DEFAULT_FORM, { email: 'a@example.com' }), { ok: true, answers: { email: 'a@example.com' } });
  const missing = validateSubmission(DEFAULT_FORM, { first_name: 'Ada' });
  assert.deepEqual(missing, { ok: false, field: 'email', message: 'Field is required' });
});
