// The one place that turns errors into HTTP answers. Every answer is {"error": "..."} (plus "field" on a
// booking validation error) with a JSON content type; 5xx details stay in the log.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { Conflict, DatabaseUnavailable, InvalidInput, NotFound } from '../core/errors.js';

/** Retry-After (seconds) while the database cannot answer: about one fault's bound (docs/operations.md) */
export const UNAVAILABLE_RETRY_AFTER_S = 5;

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

export function errorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  if (error instanceof NotFound) return reply.code(404).send({ error: error.message });
  const domain: unknown = error;
  if (domain instanceof InvalidInput) {
    return reply.code(400).send(domain.path ? { error: domain.message, field: domain.path } : { error: domain.message });
  }
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
  if (status === 400)
    return reply.code(400).send({ error: error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' ? 'Invalid JSON: empty body' : 'Invalid JSON' });
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
