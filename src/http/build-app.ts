// Builds the whole HTTP application without listening: tests use app.inject or a real port,
// `booking serve` (src/server.ts) is a thin shell around it.
import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import swagger from '@fastify/swagger';
import type { Db } from '../db/connect.js';
import { SnapshotCache } from '../app/snapshot.js';
import { apiAccessCheck, type ApiAccessDeps } from '../app/api-access.js';
import { checkHealth } from '../app/health.js';
import { errorHandler } from './errors.js';
import { apiRoutes } from './api/routes.js';
import { ANNOTATION_KEYWORDS, NAMED_SCHEMAS } from './api/schemas.js';
import { OPENAPI_OPTIONS } from './api/openapi.js';
import { adminPlugin } from './admin/plugin.js';
import { handleClientError } from './client-errors.js';

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
}

export const REDACTED_PATHS = ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]'];

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const clock = deps.clock ?? Date.now;
  const snapshots = deps.snapshots ?? new SnapshotCache(deps.db);
  const trust = deps.trustProxy ?? false;
  // a hop count as proxy-addr takes it (hop 0 is the peer): Fastify's types list no number
  const trustProxy: FastifyServerOptions['trustProxy'] =
    typeof trust === 'number' ? (_address: string, hop: number) => hop < trust : typeof trust === 'object' ? [...trust] : false;
  const app = Fastify({
    logger: deps.logger ?? false,
    // no access log per request: it would cost a large share of a fast call; errors are still logged
    logController: new LogController({ disableRequestLogging: true }),
    // a booking body is small; the API route sets its own 64 KiB limit
    bodyLimit: 1024 * 1024,
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, allErrors: false, keywords: ANNOTATION_KEYWORDS } },
    trustProxy,
    // what Node's parser refuses gets the contract's error shape too
    clientErrorHandler: handleClientError,
    // at close: idle kept-alive connections are closed, a request arriving on one answers 503 with
    // Connection: close (both Fastify 5's defaults, stated because shutdown relies on them: server.ts)
    forceCloseConnections: 'idle',
    return503OnClosing: true,
  });
  // a request still in flight when close() starts is answered with Connection: close, so its kept-alive
  // connection ends with it instead of holding the shutdown until the keep-alive timeout
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  // callback style: no promise per response on the hot path, where this almost never does anything
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });
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

  // public: no token, no 503, so client tools can always read it (docs/decisions.md §1)
  app.get('/api/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  const checkAccess = apiAccessCheck({ db: deps.db, snapshots, rateLimits: deps.rateLimits, clock });
  await app.register(apiRoutes, { prefix: '/api', db: deps.db, checkAccess, clock });
  // the admin area keeps its cookies, form parsing, headers and error pages to itself (encapsulated)
  await app.register(adminPlugin, {
    prefix: '/admin',
    db: deps.db,
    snapshots,
    clock,
    fixedMail: { smtpUrl: deps.smtpUrl ?? null, mailFrom: deps.mailFrom ?? null },
  });
  return app;
}
