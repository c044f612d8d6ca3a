// One declaration per shape: Fastify validates requests and serialises responses with these, and
// @fastify/swagger turns the same objects into /api/openapi.json. The named shapes (NAMED_SCHEMAS) are
// registered once with fastify.addSchema and referenced by $ref, so the document lists them under
// components.schemas and a generated client gets their names (docs/api-client.md).
import Type, { type Static, type TSchema } from 'typebox';
import { FIELD_REQUIRED, MAX_VALUE_LENGTH } from '../../core/forms/form-fields.js';
import { CONTROL_CHARACTERS_MESSAGE, SINGLE_LINE_MESSAGE } from '../../core/text.js';
import { ID_PATTERN, MAX_ID } from '../id-param.js';

/**
 * Where the document must describe a value otherwise than it is validated, the validation schema carries
 * the document's form under this keyword, and openapi.ts puts it in place when the document is built.
 * Query ids are validated as their exact decimal text (docs/decisions.md §1: `01`, `1.0`, `1e3` are not
 * found, which Ajv's coercion to an integer would accept) but are integers to a client; a submission is
 * validated by its form's rules (a non-scalar value answers 400 naming its field, an unknown key is
 * ignored) while the contract allows strings, numbers and booleans; a day is checked by our calendar,
 * not by Ajv's `format`.
 */
export const DESCRIBED_AS = 'x-described-as';
/** Named examples of a body, put on its media type by @fastify/swagger. */
const EXAMPLES = 'x-examples';
/** Ajv refuses unknown keywords (strict mode): these two are annotations to it. */
export const ANNOTATION_KEYWORDS = [DESCRIBED_AS, EXAMPLES];

type Named<T extends TSchema = TSchema> = T & { $id: string };
const named = <T extends TSchema>(name: string, schema: T): Named<T> => ({ ...schema, $id: name });
/** A $ref to a named schema, typed as the schema it names (for the type provider). */
const ref = <T extends TSchema>(schema: Named<T>) => Type.Unsafe<Static<T>>({ $ref: schema.$id });
/**
 * A body that is a named schema, with its own description and examples: @fastify/swagger drops the
 * siblings of a top-level $ref, not those of an allOf around it.
 */
const body = <T extends TSchema>(schema: Named<T>, options: object) =>
  Type.Unsafe<Static<T>>({ allOf: [{ $ref: schema.$id }], ...options });

type Example = { summary?: string; value: unknown };
const examples = (entries: Record<string, Example>) => ({ [EXAMPLES]: entries });

const DATE_PATTERN = '^[0-9]{4}-[0-9]{2}-[0-9]{2}$';
const SLOT_PATTERN = '^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}$';
const UTC_PATTERN = '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$';
const SLOT_DESCRIPTION = "YYYY-MM-DD HH:MM:SS, a wall-clock time in the installation's time zone (the Time-Zone header names it)";

// ---- query parameters

export const IdParam = Type.String({
  pattern: ID_PATTERN,
  description: 'An id from the previous call: decimal digits, no sign, no leading zero, no fraction or exponent; anything else is 404',
  [DESCRIBED_AS]: { type: 'integer', minimum: 1, maximum: MAX_ID },
});
export const DayParam = Type.String({
  pattern: DATE_PATTERN,
  description: 'A day from GET /days (YYYY-MM-DD, local date)',
  [DESCRIBED_AS]: { type: 'string', format: 'date', pattern: DATE_PATTERN },
});
export const SlotParam = Type.String({
  pattern: SLOT_PATTERN,
  description: `A time from GET /slots: ${SLOT_DESCRIPTION}; the space is encoded as %20`,
});

// ---- named schemas

export const Schedule = named(
  'Schedule',
  Type.Object(
    {
      id: Type.Integer({ minimum: 1, description: 'The `schedule` parameter of the other calls' }),
      name: Type.String(),
    },
    { description: 'A bookable calendar (a person, a room)' },
  ),
);
export const Reason = named(
  'Reason',
  Type.Object(
    {
      id: Type.Integer({ minimum: 1, description: 'The `reason` parameter of the other calls' }),
      name: Type.String(),
      description: Type.String({ description: 'May be empty' }),
      duration: Type.Integer({ minimum: 1, description: 'Seconds (1800 is 30 minutes)' }),
    },
    { description: 'An appointment reason (service) of one schedule' },
  ),
);
export const Day = named(
  'Day',
  Type.String({ format: 'date', pattern: DATE_PATTERN, description: 'A local date with at least one free time' }),
);
export const Slot = named(
  'Slot',
  Type.String({ minLength: 19, maxLength: 19, pattern: SLOT_PATTERN, description: `A free time: ${SLOT_DESCRIPTION}` }),
);
export const FormField = named(
  'FormField',
  Type.Object(
    {
      form_type: Type.Union([Type.Literal('textbox'), Type.Literal('textarea'), Type.Literal('checkbox'), Type.Literal('select')]),
      input_type: Type.Union([
        Type.Literal('text'),
        Type.Literal('email'),
        Type.Literal('tel'),
        Type.Literal('number'),
        Type.Literal('date'),
      ]),
      label: Type.String({ description: 'Display label' }),
      required: Type.Boolean({ description: 'The field must be filled on booking (a required checkbox must be true)' }),
      value: Type.String({ description: 'Default value' }),
      options: Type.Optional(Type.Array(Type.String(), { description: 'Choices of a select' })),
    },
    { description: "One field of a schedule's booking form" },
  ),
);

const SUBMISSION_VALUE = {
  type: ['string', 'number', 'boolean'],
  description:
    'A checkbox takes a boolean; a number field a number or a numeric string; any other field a string (a number is taken as its decimal text)',
};

export const BookingRequest = named(
  'BookingRequest',
  Type.Object(
    {
      schedule: Type.Integer({ minimum: 1, description: 'Schedule id' }),
      reason: Type.Integer({ minimum: 1, description: 'Reason id' }),
      slot: Type.String({
        minLength: 19,
        maxLength: 19,
        pattern: SLOT_PATTERN,
        description: `A time from GET /slots: ${SLOT_DESCRIPTION}`,
      }),
      submission: Type.Record(Type.String(), Type.Unknown(), {
        description:
          "Values keyed by the field names of GET /forms; keys the form does not define are ignored. Validated in the form's order, the first failure answers 400 naming the field",
        [DESCRIBED_AS]: { type: 'object', additionalProperties: SUBMISSION_VALUE },
      }),
    },
    { description: 'A booking to create' },
  ),
);
export const BookingResponse = named(
  'BookingResponse',
  Type.Object(
    {
      booking_id: Type.Integer(),
      booking_details_id: Type.String({ minLength: 20, description: "Opaque; identifies the booking in the customer's links" }),
      user_id: Type.Integer({ description: 'Customer record id' }),
      slot: Type.String({ pattern: UTC_PATTERN, description: 'The booked time in UTC' }),
    },
    { description: 'The booking created' },
  ),
);
export const ErrorBody = named(
  'Error',
  Type.Object({ error: Type.String({ description: 'What went wrong' }) }, { description: 'Every error: {"error": "..."}' }),
);
export const BookingError = named(
  'BookingError',
  Type.Object(
    {
      error: Type.String({ description: 'What went wrong' }),
      field: Type.Optional(Type.String({ description: 'The offending field: a top-level field of the body or a submission field' })),
    },
    { description: 'A refused booking request; `field` names the offending field on a validation error' },
  ),
);

export const NAMED_SCHEMAS: readonly Named[] = [
  Schedule,
  Reason,
  Day,
  Slot,
  FormField,
  BookingRequest,
  BookingResponse,
  ErrorBody,
  BookingError,
];

// ---- bodies of the operations

export const dataOf = <T extends TSchema>(schema: T, description: string, example: unknown) =>
  Type.Object({ data: schema }, { description, ...examples({ example: { value: { data: example } } }) });

export const scheduleList = (description: string) => dataOf(Type.Array(ref(Schedule)), description, [{ id: 1, name: 'Dr. Ada Lovelace' }]);
export const reasonList = (description: string) =>
  dataOf(Type.Array(ref(Reason)), description, [{ id: 1, name: 'First consultation', description: '', duration: 2700 }]);
export const dayList = (description: string) => dataOf(Type.Array(ref(Day)), description, ['2026-11-23', '2026-11-24']);
export const slotList = (description: string) => dataOf(Type.Array(ref(Slot)), description, ['2026-11-23 09:00:00', '2026-11-23 09:15:00']);
export const formFields = (description: string) =>
  dataOf(Type.Record(Type.String(), ref(FormField)), description, {
    first_name: { form_type: 'textbox', input_type: 'text', label: 'First name', required: false, value: '' },
    email: { form_type: 'textbox', input_type: 'email', label: 'E-mail', required: true, value: '' },
  });

export const bookingRequest = body(BookingRequest, {
  description: 'The booking to create',
  ...examples({
    booking: {
      value: { schedule: 1, reason: 1, slot: '2026-11-23 09:00:00', submission: { first_name: 'Ada', email: 'ada@example.com' } },
    },
  }),
});
export const bookingCreated = body(BookingResponse, {
  description: 'The booking',
  ...examples({
    created: { value: { booking_id: 1, booking_details_id: 'mGq3yb0n5v1R2Zc8XkQh7dLs', user_id: 1, slot: '2026-11-23T08:00:00Z' } },
  }),
});

// ---- errors: each status with its exact messages

const slug = (message: string) =>
  message
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
const messageExamples = (messages: readonly string[]) =>
  examples(Object.fromEntries(messages.map((m) => [slug(m), { value: { error: m } }])));

/** An error status whose messages are a closed list: the document's `enum` lets a client tell them apart. */
const errorOf = <const M extends readonly string[]>(description: string, messages: M) =>
  Type.Intersect([ref(ErrorBody), Type.Object({ error: Type.Unsafe<M[number]>({ type: 'string', enum: messages }) })], {
    description: `${description}. Messages: ${messages.map((m) => `"${m}"`).join(', ')}`,
    ...messageExamples(messages),
  });

export const NOT_FOUND = {
  schedule: 'Schedule not found',
  reason: 'Reason not found',
  day: 'Day not found',
  time: 'Time not available',
} as const;

/** Retry-After (whole seconds): on 429, and with a 503 (POST /bookings: 500) while the database cannot answer */
const retryAfter = (when: string) => ({
  'Retry-After': { type: 'integer', minimum: 1, description: `Seconds to wait before retrying; ${when}` },
});

/** The installation's time zone, on the answers that carry or take local times (docs/api-client.md) */
export const TIME_ZONE_HEADER = 'time-zone';
export const timeZoneHeader = {
  'Time-Zone': {
    type: 'string',
    description: "The installation's IANA time zone (e.g. Europe/Berlin): the zone of every day and slot",
  },
};

/** The statuses every call may answer (contract: "401, 429 and 503 apply to all calls"). */
export const commonErrors = {
  401: errorOf('Token missing, wrong or replaced', ['Unauthorized']),
  429: { ...errorOf('Request limit reached (per token, per minute)', ['Too Many Requests']), headers: retryAfter('always sent') },
  503: {
    ...errorOf(
      'API switched off ("API disabled"), installation not finished ("Not configured"), or the database cannot answer right now ("Service Unavailable", with Retry-After)',
      ['API disabled', 'Not configured', 'Service Unavailable'],
    ),
    headers: retryAfter('sent while the database cannot answer'),
  },
};

/** 404 on a GET call: an unknown id, day or time, or a missing or badly formatted parameter (never 400). */
export const notFound = <const M extends readonly string[]>(what: string, messages: M) => ({
  404: errorOf(`${what} not found, or a parameter missing or badly formatted (GET calls answer 404, not 400)`, messages),
});

// The 400 messages of POST /bookings: the body's shape (http/errors.ts), then the submission's rules
// (core/forms/form-fields.ts), each with a field it may name. An open list (the form decides which rules
// apply), so examples and not an enum.
const BODY_RULES = {
  schedule: 'must be an integer >= 1',
  reason: 'must be an integer >= 1',
  slot: 'must be a string YYYY-MM-DD HH:MM:SS of exactly 19 characters',
  submission: 'must be an object',
};
const INVALID_BODY: [string, string | undefined][] = [
  ['Invalid JSON', undefined],
  ['Invalid JSON: empty body', undefined],
  ['Invalid request: the body must be a JSON object', undefined],
  ...Object.keys(BODY_RULES).map((field): [string, string] => [`Invalid request: ${field} is required`, field]),
  ...Object.entries(BODY_RULES).map(([field, rule]): [string, string] => [`Invalid request: ${field} ${rule}`, field]),
];
const INVALID_FIELD: [string, string][] = [
  [FIELD_REQUIRED, 'email'],
  ['Must be an e-mail address', 'email'],
  ['Must be a phone number', 'phone'],
  ['Must be a number', 'guests'],
  ['Must be a date (YYYY-MM-DD)', 'birth_date'],
  ['Must be one of the options', 'topic'],
  ['Must be true or false', 'consent'],
  ['Must be a string', 'first_name'],
  [`Must be at most ${MAX_VALUE_LENGTH} characters`, 'notes'],
  [CONTROL_CHARACTERS_MESSAGE, 'notes'],
  [SINGLE_LINE_MESSAGE, 'first_name'],
];
const quoted = (messages: [string, unknown][]) => messages.map(([m]) => `"${m}"`).join(', ');

export const bookingErrors = {
  400: body(BookingError, {
    description: `Invalid JSON, a body of the wrong shape ("field" names the top-level field), or a submission value that breaks its field's rule ("field" names the submission field; "${FIELD_REQUIRED}" when a required one is missing, empty or blank). Body messages: ${quoted(INVALID_BODY)}. Submission messages: ${quoted(INVALID_FIELD)}`,
    ...examples(
      Object.fromEntries(
        [...INVALID_BODY, ...INVALID_FIELD].map(([error, field]) => [
          slug(error),
          { value: field === undefined ? { error } : { error, field } },
        ]),
      ),
    ),
  }),
  404: errorOf(
    'Unknown schedule or reason, or a well-formed time that is not free (taken, closed, past, beyond the horizon, off the grid)',
    [NOT_FOUND.schedule, NOT_FOUND.reason, NOT_FOUND.time],
  ),
  413: errorOf('Body over 64 KiB', ['Payload Too Large']),
  415: errorOf('Content-Type: application/json missing', ['Unsupported Media Type: send Content-Type: application/json']),
  500: {
    ...errorOf('The customer record or the booking could not be saved (with Retry-After when the database cannot answer)', [
      'The booking could not be saved',
    ]),
    headers: retryAfter('sent while the database cannot answer'),
  },
};
