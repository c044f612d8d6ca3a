// The HTTP-level additions of issue 12, declared in /api/openapi.json in one pass over the generated document
// (@fastify/swagger's transformObject), so the route schemas stay about bodies: Idempotency-Key on POST
// /bookings, X-Request-Id on every answer, the RateLimit-* headers on every answer to an accepted token,
// Retry-After on 429, WWW-Authenticate on 401 and Idempotent-Replayed on POST /bookings. (A 405 belongs to no
// operation, so the document's description states it: api/openapi.ts.)
// What each header means for a client: docs/api-integration.md.

// the few parts of an OpenAPI 3.1 document this pass reads or writes (openapi-types is not a dependency)
interface HeaderObject {
  description: string;
  schema: Record<string, unknown>;
}
type Headers = Record<string, HeaderObject>;
interface ResponseObject {
  headers?: Headers;
  [key: string]: unknown;
}
interface Operation {
  security?: unknown[];
  parameters?: unknown[];
  responses?: Record<string, ResponseObject | { $ref: string }>;
}
interface Document {
  paths?: Record<string, Partial<Record<'get' | 'post', Operation>> | undefined>;
  security?: unknown[];
  components?: { responses?: Record<string, unknown>; [key: string]: unknown };
}

const integerHeader = (description: string): HeaderObject => ({ description, schema: { type: 'integer', minimum: 0 } });

const REQUEST_ID: Headers = {
  'X-Request-Id': {
    description:
      "The request's id: the client's X-Request-Id when it sent 1 to 200 characters of [A-Za-z0-9._:-], else one generated; the server's log lines for the request carry it",
    schema: { type: 'string', maxLength: 200 },
  },
};

const RATE_LIMIT: Headers = {
  'RateLimit-Limit': integerHeader('Requests allowed per 60-second window for this token'),
  'RateLimit-Remaining': integerHeader('Requests left in the current window'),
  'RateLimit-Reset': integerHeader('Whole seconds until the current window closes (at least 1)'),
};

const EXTRA_BY_STATUS: Record<string, Headers> = {
  '401': {
    'WWW-Authenticate': { description: 'Bearer realm="api": the token goes in Authorization: Bearer <token>', schema: { type: 'string' } },
  },
  '429': {
    'Retry-After': {
      description: 'Whole seconds (at least 1) until the window closes and requests are accepted again',
      schema: { type: 'integer', minimum: 1 },
    },
  },
};

const IDEMPOTENCY_KEY = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes retrying safe: 1 to 255 printable ASCII characters, unique per booking attempt (a UUID, say). The first answer (201, 400 about the submission, 404) is kept with the key for at least 24 hours; a retry with the same key and body gets the same status and body with Idempotent-Replayed: true, and books nothing. The same key with a different body answers 400. A request whose key is still being answered by another request waits for that answer.',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7E]+$' },
};

const REPLAYED: Headers = {
  'Idempotent-Replayed': {
    description: 'true when this answer is the stored answer to an earlier request with the same Idempotency-Key',
    schema: { type: 'string', enum: ['true'] },
  },
};

/** What the Idempotency-Key adds to POST /bookings' answers (src/http/api/idempotency.ts). */
const IDEMPOTENCY_ANSWERS: Record<string, string> = {
  '400':
    '. With an Idempotency-Key: "Invalid Idempotency-Key: send 1 to 255 printable ASCII characters", or "Idempotency-Key reused with a different request"',
  '503':
    '. With an Idempotency-Key: "A request with this Idempotency-Key is still in progress: retry later" (Retry-After: 1) when another request holding the key has not answered within 10 s',
};

/** Statuses answered before the token is checked (no RateLimit-* headers there). */
const BEFORE_TOKEN = new Set(['401', '503']);

export function withHttpHeaders<T extends object>(generated: T): T {
  const document = generated as Document;
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const method of ['get', 'post'] as const) {
      const operation = item?.[method];
      if (!operation) continue;
      const authenticated = (operation.security ?? document.security ?? []).length > 0;
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        if ('$ref' in response) continue;
        response.headers = {
          ...response.headers,
          ...REQUEST_ID,
          ...(authenticated && !BEFORE_TOKEN.has(status) ? RATE_LIMIT : {}),
          ...EXTRA_BY_STATUS[status],
          ...(path === '/bookings' && method === 'post' && ['201', '400', '404'].includes(status) ? REPLAYED : {}),
        };
      }
      if (path === '/bookings' && method === 'post') {
        operation.parameters = [...(operation.parameters ?? []), IDEMPOTENCY_KEY];
        const responses = operation.responses ?? {};
        for (const [status, addition] of Object.entries(IDEMPOTENCY_ANSWERS)) {
          const response = responses[status];
          if (response && !('$ref' in response) && typeof response.description === 'string') response.description += addition;
        }
      }
    }
  }
  return generated;
}
