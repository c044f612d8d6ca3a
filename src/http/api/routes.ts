// The six calls of the booking API (docs/booking-api.md), registered under /api.
import type { FastifyInstance } from 'fastify';
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
  BookingRequestBody,
  BookingResponseBody,
  DayParam,
  ErrorBody,
  FormFieldBody,
  IdParam,
  Reason,
  Schedule,
  Slot,
  SlotParam,
  Day,
  commonErrors,
  RetryAfter,
  dataOf,
  notFound,
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
        summary: 'All schedules of the installation',
        security,
        response: { 200: dataOf(Type.Array(Schedule), 'Schedules by ascending id'), ...commonErrors },
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
        summary: 'The reasons (services) of one schedule',
        security,
        querystring: Type.Object({ schedule: IdParam }),
        response: {
          200: dataOf(Type.Array(Reason), 'Reasons by ascending id; empty when none is configured'),
          ...notFound('Schedule'),
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
        summary: "Days with at least one free time, from today to the schedule's horizon",
        security,
        querystring: Type.Object({ schedule: IdParam, reason: IdParam }),
        response: { 200: dataOf(Type.Array(Day), 'Days, ascending'), ...notFound('Schedule or reason'), ...commonErrors },
      },
    },
    async (request, reply) =>
      sendListAnswer(
        request,
        reply,
        await listDays(db, request.snapshot, idParam(request.query.schedule), idParam(request.query.reason), clock(), request.versions),
      ),
  );

  api.get(
    '/slots',
    {
      schema: {
        operationId: 'listSlots',
        summary: 'Free times of one day, in local installation time',
        security,
        querystring: Type.Object({ schedule: IdParam, reason: IdParam, day: DayParam }),
        response: {
          200: dataOf(Type.Array(Slot), 'Free times, ascending; empty when nothing is free that day'),
          ...notFound('Schedule, reason or day'),
          ...commonErrors,
        },
      },
    },
    async (request, reply) => {
      const { schedule, reason, day } = request.query;
      return sendListAnswer(
        request,
        reply,
        await listSlots(db, request.snapshot, idParam(schedule), idParam(reason), day, clock(), request.versions),
      );
    },
  );

  api.get(
    '/forms',
    {
      schema: {
        operationId: 'getForm',
        summary: 'The form fields to fill for booking the given time',
        security,
        querystring: Type.Object({ schedule: IdParam, reason: IdParam, slot: SlotParam }),
        response: {
          200: dataOf(Type.Record(Type.String(), FormFieldBody), "Fields keyed by name, in the operator's order"),
          ...notFound('Schedule, reason or time'),
          ...commonErrors,
        },
      },
    },
    async (request) => {
      const { schedule, reason, slot } = request.query;
      const fields = await formFor(db, request.snapshot, idParam(schedule), idParam(reason), slot, clock(), request.versions);
      return { data: Object.fromEntries(fields.map((f) => [f.name, fieldBody(f)])) };
    },
  );

  api.post(
    '/bookings',
    {
      bodyLimit: 64 * 1024,
      schema: {
        operationId: 'createBooking',
        summary: 'Creates a booking (and the customer record); queues the notification e-mails',
        security,
        body: BookingRequestBody,
        response: {
          201: { ...BookingResponseBody, description: 'The booking' },
          400: {
            ...ErrorBody,
            description:
              'Invalid JSON, invalid request or a submission field that fails its rule ("field" names it; "Field is required" when missing)',
          },
          ...notFound('Schedule, reason or free time'),
          413: { ...ErrorBody, description: 'Body over 64 KiB' },
          415: { ...ErrorBody, description: 'Content-Type: application/json missing' },
          500: {
            ...ErrorBody,
            description: 'The customer record or the booking could not be saved (with Retry-After when the database cannot answer)',
            headers: RetryAfter,
          },
          ...commonErrors,
        },
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
