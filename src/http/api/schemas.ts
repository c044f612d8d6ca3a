// One declaration per shape: Fastify validates requests and serialises responses with these, and
// @fastify/swagger turns the same objects into /api/openapi.json.
import Type, { type TSchema } from 'typebox';
import { ID_PATTERN } from '../id-param.js';

export const ErrorBody = Type.Object(
  {
    error: Type.String({ description: 'What went wrong' }),
    field: Type.Optional(Type.String({ description: 'The offending field, on a booking validation error' })),
  },
  { description: 'Error' },
);

export const IdParam = Type.String({ pattern: ID_PATTERN, description: 'Decimal id >= 1' });
export const DayParam = Type.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$', description: 'YYYY-MM-DD' });
export const SlotPattern = '^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}$';
export const SlotParam = Type.String({
  pattern: SlotPattern,
  description: 'YYYY-MM-DD HH:MM:SS, local time of the installation (space encoded as %20)',
});

export const Schedule = Type.Object({ id: Type.Integer({ minimum: 1 }), name: Type.String() });
export const Reason = Type.Object({
  id: Type.Integer({ minimum: 1 }),
  name: Type.String(),
  description: Type.String({ description: 'May be empty' }),
  duration: Type.Integer({ minimum: 1, description: 'Seconds' }),
});
export const Day = Type.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$', description: 'A local date with at least one free time' });
export const Slot = Type.String({
  minLength: 19,
  maxLength: 19,
  pattern: SlotPattern,
  description: 'A free time in local installation time',
});
export const FormFieldBody = Type.Object({
  form_type: Type.Union([Type.Literal('textbox'), Type.Literal('textarea'), Type.Literal('checkbox'), Type.Literal('select')]),
  input_type: Type.Union([Type.Literal('text'), Type.Literal('email'), Type.Literal('tel'), Type.Literal('number'), Type.Literal('date')]),
  label: Type.String(),
  required: Type.Boolean(),
  value: Type.String({ description: 'Default value' }),
  options: Type.Optional(Type.Array(Type.String(), { description: 'Choices of a select' })),
});

export const BookingRequestBody = Type.Object({
  schedule: Type.Integer({ minimum: 1, description: 'Schedule id' }),
  reason: Type.Integer({ minimum: 1, description: 'Reason id' }),
  slot: Type.String({ minLength: 19, maxLength: 19, pattern: SlotPattern, description: 'YYYY-MM-DD HH:MM:SS, exactly 19 characters' }),
  submission: Type.Record(Type.String(), Type.Unknown(), {
    description: 'Values keyed by the field names of GET /forms: strings, numbers or booleans',
  }),
});

export const BookingResponseBody = Type.Object({
  booking_id: Type.Integer(),
  booking_details_id: Type.String({ minLength: 20 }),
  user_id: Type.Integer({ description: 'Customer record id' }),
  slot: Type.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$', description: 'The booked time in UTC' }),
});

export const dataOf = <T extends TSchema>(schema: T, description: string) => Type.Object({ data: schema }, { description });

const err = (description: string) => ({ ...ErrorBody, description });

/** Sent with a 503 (and POST /bookings' 500) while the database cannot answer */
export const RetryAfter = {
  'Retry-After': { type: 'integer', description: 'Seconds to wait before retrying; sent while the database cannot answer' },
} as const;

/** The statuses every call may answer (contract: "401, 429 and 503 apply to all calls"). */
export const commonErrors = {
  401: err('Token missing, wrong or replaced: {"error":"Unauthorized"}'),
  429: err('Request limit reached; Retry-After gives the wait in seconds'),
  503: {
    ...err(
      'API disabled ("API disabled"), installation not finished ("Not configured"), or the database cannot answer right now ("Service Unavailable", with Retry-After)',
    ),
    headers: RetryAfter,
  },
};
export const notFound = (what: string) => ({ 404: err(`${what} not found, or a missing or badly formatted parameter`) });
