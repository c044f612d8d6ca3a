// The rule that keeps late messages from going out (core/messages.ts staleMessageReason), per kind.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { staleMessageReason } from '../../src/core/messages.js';

const start = 1_000_000;
const end = start + 30 * 60_000;
const booked = { cancelled: false, start, end };
const cancelled = { cancelled: true, start, end };

test('a confirmation goes only while the booking stands and has not begun', () => {
  assert.equal(staleMessageReason('booking_confirmation', booked, start - 1), null);
  assert.match(staleMessageReason('booking_confirmation', booked, start)!, /had begun/);
  assert.match(staleMessageReason('booking_confirmation', cancelled, start - 1)!, /cancelled/);
});

test('a cancellation goes while the appointment is ahead, never after its start', () => {
  assert.equal(staleMessageReason('booking_cancellation', cancelled, start - 1), null);
  assert.match(staleMessageReason('booking_cancellation', cancelled, start)!, /time had passed/);
});

test("the office's notification goes while the booking stands and until the appointment ends", () => {
  assert.equal(staleMessageReason('booking_notification', booked, end - 1), null);
  assert.match(staleMessageReason('booking_notification', booked, end)!, /was over/);
  assert.match(staleMessageReason('booking_notification', cancelled, start - 1)!, /cancelled/);
});

test("the confirmation of the customer's move goes only while the booking stands and has not begun", () => {
  assert.equal(staleMessageReason('booking_moved', booked, start - 1), null);
  assert.match(staleMessageReason('booking_moved', booked, start)!, /had begun/);
  assert.match(staleMessageReason('booking_moved', cancelled, start - 1)!, /cancelled/);
});

test("the office's notices of the customer's changes go until the appointment ends; a move's not once cancelled", () => {
  assert.equal(staleMessageReason('customer_cancelled_notice', cancelled, end - 1), null);
  assert.match(staleMessageReason('customer_cancelled_notice', cancelled, end)!, /was over/);
  assert.equal(staleMessageReason('customer_moved_notice', booked, end - 1), null);
  assert.match(staleMessageReason('customer_moved_notice', booked, end)!, /was over/);
  assert.match(staleMessageReason('customer_moved_notice', cancelled, start - 1)!, /cancelled/);
});

test("the office's cancellation notice goes until the appointment's end, then it is skipped", () => {
  assert.equal(staleMessageReason('booking_cancellation_notification', cancelled, start), null);
  assert.equal(staleMessageReason('booking_cancellation_notification', cancelled, end - 1), null);
  assert.match(staleMessageReason('booking_cancellation_notification', cancelled, end)!, /was over before the cancellation notice/);
});
