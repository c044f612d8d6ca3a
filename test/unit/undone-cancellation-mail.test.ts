// A cancellation undone by the office (docs/admin.md, "Undo cancellation"): the mails of the cancellation that
// have not gone out yet must not go out after it (core/messages.ts staleMessageReason). The undo also skips
// them in its transaction; this rule covers one a worker held at that moment or the operator retries later.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { staleMessageReason } from '../../src/core/messages.js';

const start = 1_000_000;
const end = start + 30 * 60_000;
const bookedAgain = { cancelled: false, start, end };

test("a cancellation's mails are not sent once the cancellation is undone", () => {
  assert.match(staleMessageReason('booking_cancellation', bookedAgain, start - 1)!, /cancellation was undone/);
  assert.match(staleMessageReason('booking_cancellation_notification', bookedAgain, start - 1)!, /cancellation was undone/);
  assert.match(staleMessageReason('customer_cancelled_notice', bookedAgain, start - 1)!, /cancellation was undone/);
  // the new confirmation goes
  assert.equal(staleMessageReason('booking_confirmation', bookedAgain, start - 1), null);
});
