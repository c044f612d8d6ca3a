// The one place that turns errors into HTTP answers. Every answer is {"error": "..."} (plus "field" on a
// booking validation error) with a JSON content type; 5xx details stay in the log.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { Conflict, DatabaseUnavailable, InvalidInput, NotFound } from '../core/errors.js';

/** Retry-After (seconds) while the database cannot answer: about one fault's bound (docs/operations.md) */
export const UNAVAILABLE_RETRY_AFTER_S = 5;

/** Body errors raised after the whole body was read (JSON that does not parse, an empty body). */
const BODY_READ_WHOLE = new Set(['FST_ERR_CTP_INVALID_JSON_BODY', 'FST_ERR_CTP_EMPTY_JSON_BODY']);

const QUERY_NOT_FOUND: Record<string, string> = {
  schedule: 'Schedule not found',
  reason: 'Reason not found',
  day: 'Day not found',
  slot: 'Time not available',
};

/** The top-level property an Ajv error is about: a missing one, or the first segment of its path. */
function validationField(error: FastifyError): string | undefined {
  const first = error.validation?.[0];
  if (!first) return undefined;
  const missing = (first.params as { missingProperty?: string } | undefined)?.missingProperty;
  if (missing && first.instancePath === '') return missing;
  return first.instancePath.split('/')[1] || missing || undefined;
}

/** The answer to a domain error that says the request itself is wrong (400) or names nothing available (404). */
export function requestErrorAnswer(error: unknown): { status: 400 | 404; body: { error: string; field?: string } } | null {
  if (error instanceof NotFound) return { status: 404, body: { error: error.message } };
  if (error instanceof InvalidInput)
    return { status: 400, body: error.path ? { error: error.message, field: error.path } : { error: error.message } };
  return null;
}

export function errorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const answer = requestErrorAnswer(error);
  if (answer) return reply.code(answer.status).send(answer.body);
  const domain: unknown = error;
  if (error instanceof Conflict) return reply.code(409).send({ error: error.message });
  if (domain instanceof DatabaseUnavailable) {
    // the database cannot answer (down, restarting, frozen past the timeouts, locked): not a bug, so a
    // warning; 503 (allowed on every call), except POST /bookings, whose failure the contract fixes as 500
    request.log.warn({ err: domain }, 'database unavailable');
    reply.header('retry-after', String(UNAVAILABLE_RETRY_AFTER_S));
    if (request.method === 'POST' && request.url.startsWith('/api/bookings'))
      return reply.code(500).send({ error: 'The booking could not be saved' });
    return reply.code(503).send({ error: 'Service Unavailable' });
  }
  if (error.validation) {
    const field = validationField(error);
    // GET calls answer 404, not 400, for a missing or badly formatted parameter (contract, Errors)
    if (error.validationContext === 'querystring') return reply.code(404).send({ error: (field && QUERY_NOT_FOUND[field]) || 'Not Found' });
    if (field) return reply.code(400).send({ error: `Invalid request: ${field} ${describeRule(error)}`, field });
    return reply.code(400).send({ error: 'Invalid request: the body must be a JSON object' });
  }
  const status = error.statusCode ?? 500;
  if (status === 415) return reply.code(415).send({ error: 'Unsupported Media Type: send Content-Type: application/json' });
  if (status === 413) return reply.code(413).send({ error: 'Payload Too Large' });
  if (status === 400) {
    // the body was read whole before it failed to parse: the connection can serve the next request
    // (Fastify closes it after any body error, to be safe about a body it did not read)
    if (BODY_READ_WHOLE.has(error.code)) reply.removeHeader('connection');
    return reply.code(400).send({ error: error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' ? 'Invalid JSON: empty body' : 'Invalid JSON' });
  }
  if (status < 500) return reply.code(status).send({ error: error.message });
  request.log.error({ err: error }, 'request failed');
  const saving = request.method === 'POST' && request.url.startsWith('/api/bookings');
  return reply.code(500).send({ error: saving ? 'The booking could not be saved' : 'Internal Server Error' });
}

function describeRule(error: FastifyError): string {
  const first = error.validation![0]!;
  const field = validationField(error);
  if (first.keyword === 'required' && first.instancePath === '') return 'is required';
  switch (field) {
    case 'schedule':
    case 'reason':
      return 'must be an integer >= 1';
    case 'slot':
      return 'must be a string YYYY-MM-DD HH:MM:SS of exactly 19 characters';
    case 'submission':
      return 'must be an object';
    default:
      return 'is invalid';
  }
}
