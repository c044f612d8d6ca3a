// A typed client of the booking API (docs/api-client.md). The types come from the server's OpenAPI document
// (schema.generated.ts, `npm run client:generate`); the calls go through openapi-fetch. What this file adds
// is what every integrator writes by hand: the base URL and token, an Idempotency-Key on every booking,
// retries that honour Retry-After, and errors typed by status and message. It imports nothing of the server.
import createClient, { type Client } from 'openapi-fetch';
import type { components, paths } from './schema.generated.js';

export type { components, paths } from './schema.generated.js';
export type Schedule = components['schemas']['Schedule'];
export type Reason = components['schemas']['Reason'];
export type FormField = components['schemas']['FormField'];
export type BookingRequest = components['schemas']['BookingRequest'];
export type BookingResponse = components['schemas']['BookingResponse'];

type Method = 'get' | 'post';
type Responses = { [P in keyof paths]: { [M in Method]: paths[P][M] extends { responses: infer R } ? R : never }[Method] }[keyof paths];
// distributed over the calls' responses, so that each call's statuses count, not only the ones all share
type ErrorBodies<R> = R extends unknown
  ? {
      [S in keyof R]: S extends number
        ? S extends 200 | 201
          ? never
          : R[S] extends { content: { 'application/json': infer B } }
            ? [S, B]
            : never
        : never;
    }[keyof R]
  : never;
type ErrorBody = ErrorBodies<Responses>;
/** The statuses the API answers with an error body. */
export type ErrorStatus = ErrorBody[0];
/** The messages the document lists for an error status (a string where the list is open, as for 400). */
export type ErrorMessage<S extends ErrorStatus = ErrorStatus> = Extract<ErrorBody, [S, unknown]>[1] extends { error: infer M } ? M : never;

/** An answer other than 2xx, with the API's error body: `{ error, field? }`. */
export class BookingApiError<S extends ErrorStatus = ErrorStatus> extends Error {
  override readonly name = 'BookingApiError';
  constructor(
    readonly status: S,
    override readonly message: ErrorMessage<S> & string,
    /** the offending field, on a booking validation error (400) */
    readonly field: string | undefined,
    readonly response: Response,
  ) {
    super(message);
  }

  /** This status, and if given this message: `error.is(404, 'Time not available')` (type-checked against the document). */
  is<T extends ErrorStatus>(status: T, message?: ErrorMessage<T>): this is BookingApiError<T> {
    return (this.status as number) === status && (message === undefined || (this.message as string) === message);
  }
}

export interface BookingClientOptions {
  /** The installation's API address, e.g. `https://booking.example.com/api` */
  baseUrl: string;
  /** The API token (`apm_…`): keep it on the server, never in a web page */
  token: string;
  /** Retries of one call after a 429 (or a 503 or 500 with Retry-After) or a network error; default 3 */
  retries?: number;
  /** The longest Retry-After honoured, in seconds: a longer wait is answered with the error at once; default 60 */
  maxRetryAfterSeconds?: number;
  /** How the client waits before a retry (tests may replace it); default setTimeout */
  sleep?: (ms: number) => Promise<void>;
  /** The fetch to use; default globalThis.fetch */
  fetch?: (request: Request) => Promise<Response>;
}

const NETWORK_BACKOFF_MS = [250, 1000, 4000];
const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Retry-After in milliseconds: whole seconds or an HTTP date (RFC 9110 §10.2.3); null when absent or unreadable. */
export function retryAfterMs(header: string | null, now = Date.now()): number | null {
  if (header === null) return null;
  if (/^\s*\d+\s*$/.test(header)) return Number(header) * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

/**
 * A fetch that re-sends a request after a 429, or a 503 or 500 with Retry-After (the server is briefly
 * unable to answer), waiting what Retry-After says, and after a network error when the request is safe to
 * repeat: a GET, or a POST that carries an Idempotency-Key (the server answers a repeat with the stored answer).
 */
function retryingFetch(options: BookingClientOptions): (request: Request) => Promise<Response> {
  const send = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const sleep = options.sleep ?? defaultSleep;
  const retries = options.retries ?? 3;
  const maxWaitMs = (options.maxRetryAfterSeconds ?? 60) * 1000;
  return async (request) => {
    const repeatable = request.method === 'GET' || request.headers.has('idempotency-key');
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      try {
        // a clone per attempt: a body can be read once
        response = await send(request.clone());
      } catch (error) {
        if (!repeatable || attempt >= retries || request.signal.aborted) throw error;
        await sleep(NETWORK_BACKOFF_MS[Math.min(attempt, NETWORK_BACKOFF_MS.length - 1)]!);
        continue;
      }
      const wait = retryAfterMs(response.headers.get('retry-after'));
      // a 503 or 500 with Retry-After: the database could not answer and nothing was stored (docs/operations.md)
      const later = response.status === 429 || ((response.status === 503 || response.status === 500) && wait !== null);
      if (!later || attempt >= retries || (wait ?? 0) > maxWaitMs) return response;
      // without Retry-After (a 429 always has one from this server), one second
      await response.body?.cancel();
      await sleep(wait ?? 1000);
    }
  };
}

/** The six calls of the booking flow, typed from the document; each returns its data or throws BookingApiError. */
export class BookingClient {
  /** The openapi-fetch client underneath (token, retries included), for anything the six methods do not cover */
  readonly raw: Client<paths>;
  /** The installation's IANA time zone, from the last answer of days(), slots() or form(); null before one */
  timeZone: string | null = null;

  constructor(options: BookingClientOptions) {
    this.raw = createClient<paths>({
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
      headers: { authorization: `Bearer ${options.token}` },
      fetch: retryingFetch(options),
    });
  }

  async schedules(): Promise<Schedule[]> {
    return this.data(await this.raw.GET('/schedules'));
  }

  async reasons(schedule: number): Promise<Reason[]> {
    return this.data(await this.raw.GET('/reasons', { params: { query: { schedule } } }));
  }

  /** Days (YYYY-MM-DD, local dates) with at least one free time */
  async days(schedule: number, reason: number): Promise<string[]> {
    return this.localData(await this.raw.GET('/days', { params: { query: { schedule, reason } } }));
  }

  /** Free times of a day (YYYY-MM-DD HH:MM:SS, wall-clock times in `timeZone`) */
  async slots(schedule: number, reason: number, day: string): Promise<string[]> {
    return this.localData(await this.raw.GET('/slots', { params: { query: { schedule, reason, day } } }));
  }

  /** The form to fill for the time, keyed by field name in the operator's order */
  async form(schedule: number, reason: number, slot: string): Promise<Record<string, FormField>> {
    return this.localData(await this.raw.GET('/forms', { params: { query: { schedule, reason, slot } } }));
  }

  /**
   * Books. Sends an Idempotency-Key (a random UUID unless given): the client's own retries repeat it, so
   * a retried booking is booked once; pass your own key to retry across restarts of your process.
   */
  async book(request: BookingRequest, options: { idempotencyKey?: string } = {}): Promise<BookingResponse> {
    const idempotencyKey = options.idempotencyKey ?? crypto.randomUUID();
    const result = await this.raw.POST('/bookings', { body: request, headers: { 'idempotency-key': idempotencyKey } });
    if (result.error !== undefined) throw errorOf(result.error, result.response);
    return result.data;
  }

  private data<T>(result: { data?: { data: T }; error?: unknown; response: Response }): T {
    if (result.error !== undefined || result.data === undefined) throw errorOf(result.error, result.response);
    return result.data.data;
  }

  private localData<T>(result: { data?: { data: T }; error?: unknown; response: Response }): T {
    const data = this.data(result);
    this.timeZone = result.response.headers.get('time-zone') ?? this.timeZone;
    return data;
  }
}

function errorOf(body: unknown, response: Response): BookingApiError {
  const { error, field } = (typeof body === 'object' && body !== null ? body : {}) as { error?: unknown; field?: unknown };
  const message = typeof error === 'string' ? error : `HTTP ${response.status}`;
  return new BookingApiError(response.status as ErrorStatus, message, typeof field === 'string' ? field : undefined, response);
}
