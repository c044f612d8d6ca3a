// Builds the whole HTTP application without listening: tests use app.inject or a real port,
// `booking serve` (src/server.ts) is a thin shell around it.
import { createHash, randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyServerOptions } from 'fastify';
import swagger from '@fastify/swagger';
import compress from '@fastify/compress';
import type { Db } from '../db/connect.js';
import { SnapshotCache } from '../app/snapshot.js';
import { apiAccessCheck, type ApiAccessDeps } from '../app/api-access.js';
import { checkHealth } from '../app/health.js';
import { errorHandler } from './errors.js';
import { apiRoutes } from './api/routes.js';
import { underApi, unroutableApiRequest } from './api/gate.js';
import { ANNOTATION_KEYWORDS, NAMED_SCHEMAS } from './api/schemas.js';
import { OPENAPI_OPTIONS } from './api/openapi.js';
import { adminPlugin } from './admin/plugin.js';
import { managePlugin } from './manage/plugin.js';
import { handleClientError, unreadableRequestAnswer } from './client-errors.js';

export interface AppDeps {
  db: Db;
  clock?: () => number;
  rateLimits?: ApiAccessDeps['rateLimits'];
  snapshots?: SnapshotCache;
  logger?: FastifyServerOptions['logger'];
  /** which reverse proxies' X-Forwarded-* to trust (config.trustProxy: a hop count or addresses); default none */
  trustProxy?: false | number | readonly string[];
  /** SMTP_URL / MAIL_FROM (config): when set, the admin area shows them read-only; default null, i.e. unset */
  smtpUrl?: string | null;
  mailFrom?: string | null;
  /** PUBLIC_URL (config): the manage links' base; the admin area says when there is none */
  publicUrl?: string | null;
  /** the manage page's limit per client address per minute (tests lower it) */
  manageRatePerMinute?: number;
}

/** A client's X-Request-Id is kept when it is this sane; anything else gets a generated id (docs/api-integration.md). */
const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,200}$/;

function requestId(request: IncomingMessage): string {
  const sent = request.headers['x-request-id'];
  return typeof sent === 'string' && CLIENT_REQUEST_ID.test(sent) ? sent : randomUUID();
}

/**
 * The routes @fastify/compress serves: the OpenAPI document (about 10 KB; /days and /slots compress their
 * cached answers themselves, api/compressed-answers.ts). No other route carries its hooks.
 */
const COMPRESSED_ROUTES = new Set(['/api/openapi.json']);

/** Whether an If-None-Match header names this (weak) entity tag; weak comparison, as RFC 9110 §13.1.2 asks. */
function matchesEtag(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const opaque = etag.slice(2);
  return header.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t === etag || t === opaque;
  });
}

export const REDACTED_PATHS = ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]'];

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const clock = deps.clock ?? Date.now;
  const snapshots = deps.snapshots ?? new SnapshotCache(deps.db);
  const trust = deps.trustProxy ?? false;
  // a hop count as proxy-addr takes it (hop 0 is the peer): Fastify's types list no number
  const trustProxy: FastifyServerOptions['trustProxy'] =
    typeof trust === 'number' ? (_address: string, hop: number) => hop < trust : typeof trust === 'object' ? [...trust] : false;
  const checkAccess = apiAccessCheck({ db: deps.db, snapshots, rateLimits: deps.rateLimits, clock });
  const unroutableApi = unroutableApiRequest(checkAccess);
  const app = Fastify({
    logger: deps.logger ?? false,
    // no access log per request: it would cost a large share of a fast call; errors are still logged
    logController: new LogController({ disableRequestLogging: true }),
    // a booking body is small; the API route sets its own 64 KiB limit
    bodyLimit: 1024 * 1024,
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, allErrors: false, keywords: ANNOTATION_KEYWORDS } },
    trustProxy,
    // every answer carries X-Request-Id, and every log line of the request its id (docs/api-integration.md)
    requestIdHeader: false,
    genReqId: requestId,
    // what Node's parser refuses gets the contract's error shape too
    clientErrorHandler: handleClientError,
    // and so does what the router refuses (a broken %-escape in the path): Fastify's own answer is its shape;
    // under /api the gate answers first
    frameworkErrors: (_error, request, reply) => {
      if (underApi(request.url)) return void unroutableApi(request, reply);
      const { status, error } = unreadableRequestAnswer(`${request.method} ${request.url}`);
      void (reply as FastifyReply).code(status).send({ error });
    },
    // at close: idle kept-alive connections are closed (Fastify 5's default, stated because shutdown relies
    // on it: server.ts); a request still arriving on a busy one gets Connection: close and our own 503 below,
    // since Fastify's (return503OnClosing) has a body of its own shape and no Retry-After
    forceCloseConnections: 'idle',
    return503OnClosing: false,
  });
  // a request still in flight when close() starts is answered with Connection: close, so its kept-alive
  // connection ends with it instead of holding the shutdown until the keep-alive timeout
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  // a request that arrives once shutdown has begun: the contract's shape, and when to come back (a load
  // balancer retries it on another instance). Callback style: nothing per request but the check
  app.addHook('onRequest', (_request, reply, done) => {
    if (!closing) return done();
    void reply.code(503).header('retry-after', '5').send({ error: 'Service Unavailable' });
  });
  // callback style: no promise per response on the hot path, where this almost never does anything else
  app.addHook('onSend', (request, reply, payload, done) => {
    reply.header('x-request-id', request.id);
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });
  // which methods each /api path takes, for the 405's Allow (api/routes.ts)
  const apiMethods = new Map<string, string[]>();
  app.addHook('onRoute', (route) => {
    // only the routes whose answers can be large get @fastify/compress's hooks: the others pay nothing
    if (route.compress === undefined) route.compress = COMPRESSED_ROUTES.has(route.url) ? {} : false;
    if (!route.url.startsWith('/api/')) return;
    const methods = apiMethods.get(route.url) ?? [];
    for (const method of [route.method].flat()) if (!methods.includes(method)) methods.push(method);
    apiMethods.set(route.url, methods);
  });
  await app.register(compress, { global: false, threshold: 1024, encodings: ['br', 'gzip'] });
  app.setErrorHandler(errorHandler);
  app.decorateRequest('snapshot', null as never);
  app.decorateRequest('versions', null as never);

  // the API's named shapes, referenced by $ref from the routes: one schema each for validation,
  // serialisation and the document's components.schemas
  for (const schema of NAMED_SCHEMAS) app.addSchema(schema);
  await app.register(swagger, OPENAPI_OPTIONS);

  app.get('/healthz', { schema: { hide: true } }, async (_request, reply) => {
    if (await checkHealth(deps.db)) return { status: 'ok' };
    return reply.code(503).send({ status: 'unavailable', error: 'database unreachable' });
  });

  // a person who types the bare address lands in the admin area (which signs them in), never on raw JSON
  app.get('/', { schema: { hide: true } }, async (_request, reply) => reply.redirect('/admin', 302));

  // public: no token, no 503, so client tools can always read it (docs/decisions.md §1). It changes only
  // with the code: rendered once, with a validator so a client's copy is revalidated with a 304
  let openapi: { body: string; etag: string } | undefined;
  app.get('/api/openapi.json', { schema: { hide: true } }, async (request, reply) => {
    if (openapi === undefined) {
      const body = JSON.stringify(app.swagger());
      // weak: the compressed and the plain representation share it
      openapi = { body, etag: `W/"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
    }
    reply.header('etag', openapi.etag).header('cache-control', 'public, max-age=300');
    if (matchesEtag(request.headers['if-none-match'], openapi.etag)) return reply.code(304).send();
    return reply.header('content-type', 'application/json; charset=utf-8').send(openapi.body);
  });

  await app.register(apiRoutes, { prefix: '/api', db: deps.db, checkAccess, clock, apiMethods });
  // the admin area keeps its cookies, form parsing, headers and error pages to itself (encapsulated)
  await app.register(adminPlugin, {
    prefix: '/admin',
    db: deps.db,
    snapshots,
    clock,
    fixedMail: { smtpUrl: deps.smtpUrl ?? null, mailFrom: deps.mailFrom ?? null, publicUrl: deps.publicUrl ?? null },
  });
  // the customer's manage page: public, its own headers, forms and rate limit (encapsulated)
  await app.register(managePlugin, {
    prefix: '/manage',
    db: deps.db,
    snapshots,
    clock,
    rateLimits: deps.rateLimits,
    ratePerMinute: deps.manageRatePerMinute,
  });
  return app;
}
