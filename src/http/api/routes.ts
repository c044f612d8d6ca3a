// The six calls of the booking API (docs/booking-api.md), registered under /api.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import type { Db } from '../../db/connect.js';
import type { ApiAccessCheck } from '../../app/api-access.js';
import { listReasons, listDays, listSlots, formFor } from '../../app/availability.js';
import { createBooking, type BookingCreated } from '../../app/bookings.js';
import type { FormField } from '../../core/forms/form-fields.js';
import { formatUtc } from '../../core/time/calendar.js';
import { apiGate, methodNotAllowed } from './gate.js';
import { idempotentBooking } from './idempotency.js';
import { sendListAnswer } from './compressed-answers.js';
import { idParam } from '../id-param.js';
import {
  DayParam,
  IdParam,
  NOT_FOUND,
  SlotParam,
  TIME_ZONE_HEADER,
  bookingCreated,
  bookingErrors,
  bookingRequest,
  commonErrors,
  dayList,
  formFields,
  notFound,
  reasonList,
  scheduleList,
  slotList,
  timeZoneHeader,
} from './schemas.js';

export interface ApiDeps {
  db: Db;
  checkAccess: ApiAccessCheck;
  clock: () => number;
  /** the methods each /api path takes (full path -> methods), for a 405's Allow */
  apiMethods: ReadonlyMap<string, readonly string[]>;
}

const security = [{ bearerAuth: [] }];

function fieldBody(f: FormField) {
  return {
    form_type: f.formType,
    input_type: f.inputType,
    label: f.label,
    required: f.required,
    value: f.value,
    ...(f.formType === 'select' ? { options: [...f.options] } : {}),
  };
}

const bookedBody = (created: BookingCreated) => ({
  booking_id: created.bookingId,
  booking_details_id: created.detailsId,
  user_id: created.customerId,
  slot: formatUtc(created.start),
});

/**
 * The installation's time zone on the answers that carry or take local times, so an integrator need not
 * be told it: the name is in the snapshot the gate already read (a configured installation always has one).
 */
function sendTimeZone(request: FastifyRequest, reply: FastifyReply) {
  reply.header(TIME_ZONE_HEADER, request.snapshot.settings.timezone);
}

export async function apiRoutes(scope: FastifyInstance, deps: ApiDeps) {
  const { db, clock } = deps;
  // handlers take their request (and reply) types from the schemas below
  const api = scope.withTypeProvider<TypeBoxTypeProvider>();
  // only JSON bodies: without this, Fastify's text/plain parser would accept what must be a 415
  api.removeContentTypeParser('text/plain');
  api.addHook('onRequest', apiGate(deps.checkAccess));
  api.setNotFoundHandler(
    (request, reply) => methodNotAllowed(request, reply, deps.apiMethods) ?? reply.code(404).send({ error: 'Not Found' }),
  );

  api.get(
    '/schedules',
    {
      schema: {
        operationId: 'listSchedules',
        summary: 'List the schedules',
        description:
          'All schedules of the installation, by ascending id (creation order). Step 1 of the booking flow: gives the `schedule` id.',
        tags: ['Catalogue'],
        security,
        response: { 200: scheduleList('Schedules by ascending id'), ...commonErrors },
      },
    },
    async (request) => ({
      data: [...request.snapshot.schedules.values()].map((s) => ({ id: s.id, name: s.name })),
    }),
  );

  api.get(
    '/reasons',
    {
      schema: {
        operationId: 'listReasons',
        summary: 'List the reasons of a schedule',
        description:
          'The appointment reasons (services) of one schedule, by ascending id; an empty list when none is configured. Step 2: gives the `reason` id and the duration.',
        tags: ['Catalogue'],
        security,
        querystring: Type.Object({ schedule: IdParam }),
        response: {
          200: reasonList('Reasons by ascending id; empty when none is configured'),
          ...notFound('Schedule', [NOT_FOUND.schedule]),
          ...commonErrors,
        },
      },
    },
    async (request) => ({
      data: listReasons(request.snapshot, idParam(request.query.schedule)).map((r) => ({
        id: r.id,
        name: r.name,
        description: r.description,
        duration: r.durationMinutes * 60,
      })),
    }),
  );

  api.get(
    '/days',
    {
      schema: {
        operationId: 'listDays',
        summary: 'List the days with free times',
        description:
          "The local dates, ascending, from today to the end of the schedule's horizon, that have at least one free time for the reason. Step 3. The Time-Zone header names the installation's time zone.",
        tags: ['Availability'],
        security,
        querystring: Type.Object({ schedule: IdParam, reason: IdParam }),
        response: {
          200: { ...dayList('Days, ascending'), headers: timeZoneHeader },
          ...notFound('Schedule or reason', [NOT_FOUND.schedule, NOT_FOUND.reason]),
          ...commonErrors,
        },
      },
    },
    async (request, reply) => {
      const { schedule, reason } = request.query;
      const days = await listDays(db, request.snapshot, idParam(schedule), idParam(reason), clock(), request.versions);
      sendTimeZone(request, reply);
      return sendListAnswer(request, reply, days);
    },
  );

  api.get(
    '/slots',
    {
      schema: {
        operationId: 'listSlots',
        summary: 'List the free times of a day',
        description:
          "The free start times of one day, ascending, as wall-clock times in the installation's time zone (the Time-Zone header names it); an empty list when nothing is free that day. A day outside today..horizon is 404. Step 4.",
        tags: ['Availability'],
        security,
        querystring: Type.Object({ schedule: IdParam, reason: IdParam, day: DayParam }),
        response: {
          200: { ...slotList('Free times, ascending; empty when nothing is free that day'), headers: timeZoneHeader },
          ...notFound('Schedule, reason or day', [NOT_FOUND.schedule, NOT_FOUND.reason, NOT_FOUND.day]),
          ...commonErrors,
        },
      },
    },
    async (request, reply) => {
      const { schedule, reason, day } = request.query;
      const slots = await listSlots(db, request.snapshot, idParam(schedule), idParam(reason), day, clock(), request.versions);
      sendTimeZone(request, reply);
      return sendListAnswer(request, reply, slots);
    },
  );

  api.get(
    '/forms',
    {
      schema: {
        operationId: 'getForm',
        summary: 'Get the booking form for a time',
        description:
          "The fields to fill for booking the time, keyed by field name in the operator's order; the set differs per schedule, so fetch it rather than hard-code it. A time that is not free (any more) is 404. Step 5.",
        tags: ['Availability'],
        security,
        querystring: Type.Object({ schedule: IdParam, reason: IdParam, slot: SlotParam }),
        response: {
          200: { ...formFields("Fields keyed by name, in the operator's order"), headers: timeZoneHeader },
          ...notFound('Schedule, reason or time', [NOT_FOUND.schedule, NOT_FOUND.reason, NOT_FOUND.time]),
          ...commonErrors,
        },
      },
    },
    async (request, reply) => {
      const { schedule, reason, slot } = request.query;
      const fields = await formFor(db, request.snapshot, idParam(schedule), idParam(reason), slot, clock(), request.versions);
      sendTimeZone(request, reply);
      return { data: Object.fromEntries(fields.map((f) => [f.name, fieldBody(f)])) };
    },
  );

  api.post(
    '/bookings',
    {
      bodyLimit: 64 * 1024,
      schema: {
        operationId: 'createBooking',
        summary: 'Create a booking',
        description:
          'Books the time and creates (or updates, matched by e-mail address) the customer record; queues the confirmation and notification e-mails. The time is re-checked in the transaction that stores the booking: of two requests for the last place, one gets 201 and the other 404 "Time not available". Step 6.',
        tags: ['Bookings'],
        security,
        body: bookingRequest,
        response: { 201: bookingCreated, ...bookingErrors, ...commonErrors },
      },
      // 415 comes before the body is read (docs/decisions.md §1: 415 -> 413 -> 400)
      preParsing: async (request, reply) => {
        if (!/^application\/json\s*(;|$)/i.test(request.headers['content-type'] ?? '')) {
          return reply.code(415).send({ error: 'Unsupported Media Type: send Content-Type: application/json' });
        }
      },
    },
    async (request, reply) => {
      const { schedule, reason, slot, submission } = request.body;
      const booking = { scheduleId: schedule, reasonId: reason, slot, submission, source: 'api' } as const;
      const key = request.headers['idempotency-key'];
      if (key !== undefined) return idempotentBooking(request, reply, { db, clock }, key, booking, bookedBody);
      return reply.code(201).send(bookedBody(await createBooking(db, request.snapshot, booking, clock())));
    },
  );
}
