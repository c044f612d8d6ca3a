// How @fastify/swagger builds /api/openapi.json from the route schemas: the document's header (info,
// tags, security scheme), the named schemas under their own names, and the schemas that the document
// describes otherwise than they are validated (schemas.ts, DESCRIBED_AS).
import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import { withHttpHeaders } from './http-headers.js';
import { DESCRIBED_AS } from './schemas.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** What stays of a schema replaced by its DESCRIBED_AS form: its annotations; its validation keywords give way. */
const ANNOTATIONS = new Set(['description', 'title', 'examples', 'example', 'deprecated']);

/** The document with every schema that carries DESCRIBED_AS replaced by what it carries (a copy). */
function describedAsDocumented(value: Json): Json {
  if (Array.isArray(value)) return value.map(describedAsDocumented);
  if (value === null || typeof value !== 'object') return value;
  if (DESCRIBED_AS in value) {
    const { [DESCRIBED_AS]: documented, ...rest } = value;
    const annotations = Object.fromEntries(Object.entries(rest).filter(([key]) => ANNOTATIONS.has(key)));
    return describedAsDocumented({ ...annotations, ...(documented as Record<string, Json>) });
  }
  return Object.fromEntries(Object.entries(value).map(([key, v]) => [key, describedAsDocumented(v)]));
}

export const OPENAPI_OPTIONS: FastifyDynamicSwaggerOptions = {
  openapi: {
    openapi: '3.1.0',
    info: {
      title: 'Appointment Booking API',
      version: '1.0.0',
      description: [
        'Free times and bookings of one installation, called server to server in six steps: schedules, reasons, days, slots, form, booking.',
        'Every call sends `Authorization: Bearer <token>` (the token is generated in the admin area).',
        "Days and slots are wall-clock times in the installation's time zone, named by the `Time-Zone` header of GET /days, /slots and /forms; the booking answer gives the booked time in UTC.",
        'Errors are `{"error": "..."}` (plus `field` on a booking validation error); each response lists its exact messages.',
        // a 405 belongs to no operation, so this is the one place the document can state it
        'A known path called with a method it does not take answers 405 `{"error": "Method Not Allowed"}` with an `Allow` header listing the methods it takes (after the checks every call makes: 503, 401, 429).',
      ].join('\n\n'),
      contact: { name: 'The operator of this installation' },
      // the document describes an installation's API; the operator's own terms apply to its use
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
    },
    servers: [{ url: '/api', description: 'The installation this document was read from' }],
    tags: [
      { name: 'Catalogue', description: 'What can be booked: schedules and their reasons' },
      { name: 'Availability', description: 'When it can be booked, and which form to fill: days, slots, form fields' },
      { name: 'Bookings', description: 'Creating a booking' },
    ],
    components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'apm_ followed by 64 characters' } } },
  },
  // the named schemas (addSchema'd with their $id) keep their names in components.schemas
  refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
  // only the booking API is described; the admin area and /healthz are not part of it
  transform: ({ schema, url }) => ({ schema: url.startsWith('/api/') ? schema : { ...schema, hide: true }, url }),
  transformObject: (document) => {
    // this app emits OpenAPI only (never Swagger 2)
    const openapi = 'openapiObject' in document ? document.openapiObject : document.swaggerObject;
    // the headers and 405 of the API's HTTP behaviour, declared in one place (api/http-headers.ts)
    return describedAsDocumented(withHttpHeaders(openapi) as Json) as typeof openapi;
  },
};
