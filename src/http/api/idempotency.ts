// POST /bookings with an Idempotency-Key header (docs/api-integration.md): the first request's answer is
// stored with the key and replayed, byte for byte, to every retry (app/idempotency.ts). Which answers are
// final: the 201, a 400 about the submission and a 404 (the same request would get them again). A 500 or
// 503 is not: the key is released and a retry tries anew. Without the header this module is never entered.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../../db/connect.js';
import { createBooking, type BookingCreated, type BookingRequest } from '../../app/bookings.js';
import {
  claimIdempotencyKey,
  isValidIdempotencyKey,
  KeyTakenOver,
  recordAnswer,
  recordingAnswerIn,
  releaseIdempotencyKey,
  requestHash,
  type StoredAnswer,
} from '../../app/idempotency.js';
import { requestErrorAnswer } from '../errors.js';

export const INVALID_KEY = 'Invalid Idempotency-Key: send 1 to 255 printable ASCII characters';
export const KEY_REUSED = 'Idempotency-Key reused with a different request';
export const KEY_BUSY = 'A request with this Idempotency-Key is still in progress: retry later';

function sendAnswer(reply: FastifyReply, answer: StoredAnswer, replayed: boolean) {
  reply.code(answer.status).header('content-type', 'application/json; charset=utf-8');
  if (replayed) reply.header('idempotent-replayed', 'true');
  // the stored text itself, so the first answer and every replay are the same bytes
  return reply.send(answer.body);
}

export async function idempotentBooking(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: { db: Db; clock: () => number },
  key: string | string[],
  booking: BookingRequest,
  bookedBody: (created: BookingCreated) => object,
) {
  if (typeof key !== 'string' || !isValidIdempotencyKey(key)) return reply.code(400).send({ error: INVALID_KEY });
  const { db, clock } = deps;
  const claim = await claimIdempotencyKey(db, key, requestHash(request.body), clock);
  switch (claim.kind) {
    case 'mismatch':
      return reply.code(400).send({ error: KEY_REUSED });
    case 'busy':
      return reply.code(503).header('retry-after', '1').send({ error: KEY_BUSY });
    case 'replay':
      return sendAnswer(reply, claim.answer, true);
    case 'owner':
      break;
  }
  let answer: StoredAnswer | undefined;
  try {
    await createBooking(
      db,
      request.snapshot,
      booking,
      clock(),
      recordingAnswerIn(claim, (created: BookingCreated) => (answer = { status: 201, body: JSON.stringify(bookedBody(created)) })),
    );
  } catch (error) {
    // another request owns the key now: nothing of ours was stored; answer what the key answers now
    if (error instanceof KeyTakenOver) return idempotentBooking(request, reply, deps, key, booking, bookedBody);
    const refused = requestErrorAnswer(error);
    if (refused === null) {
      // not an answer to keep: whoever retries tries anew (a booking that did commit keeps its 201)
      await releaseIdempotencyKey(db, claim).catch((releaseError: unknown) =>
        request.log.warn({ err: releaseError }, 'idempotency key not released; it is taken over after its lease'),
      );
      throw error;
    }
    answer = { status: refused.status, body: JSON.stringify(refused.body) };
    try {
      await recordAnswer(db, claim, answer);
    } catch (recordError) {
      if (recordError instanceof KeyTakenOver) return idempotentBooking(request, reply, deps, key, booking, bookedBody);
      throw recordError;
    }
  }
  return sendAnswer(reply, answer!, false);
}
