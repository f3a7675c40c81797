// SPDX-License-Identifier: GPL-3.0-or-later
import { Hono, type Context } from 'hono';
import { methodNotAllowed } from 'hono/method-not-allowed';
import { requestId } from 'hono/request-id';
import {
  ENDPOINTS,
  HEADERS,
  ID_PREFIXES,
  newId,
  type EndpointSpec,
} from '@visage-avatar/client/api';
import { ApiError, apiErrorOf } from './apiError.js';
import { AssetError } from '../assets/assetError.js';
import { SessionError } from '../sessions/sessionErrors.js';
import { DatabaseUnavailableError } from '../store/databaseUnavailable.js';
import { authenticate, KeyLookups, secretOf } from './authenticate.js';
import { hashSecret } from '../store/store.js';
import { mountBodyLimits } from './bodyLimits.js';
import { errorResponse } from './errorResponse.js';
import { RateLimiter } from './rateLimiter.js';
import { mountAvatarAtlasRoute } from './routes/avatarAtlas.js';
import { mountAvatarRoutes } from './routes/avatars.js';
import type { AppDeps, AppEnv } from './routes/context.js';
import { mountFileRoutes } from './routes/files.js';
import { mountMetaRoutes } from './routes/meta.js';
import { mountPathIdChecks } from './routes/pathIds.js';
import { mountSessionRoutes, setConcurrencyHeaders } from './routes/sessions.js';
import { mountVoiceRoutes } from './routes/voices.js';

export type { AppDeps, MountedPages } from './routes/context.js';

/** nginx's status for a request the client abandoned; never sent (nobody is listening). */
const CLIENT_CLOSED_REQUEST = 499;

const PUBLIC_PATHS = new Set<string>([ENDPOINTS.health.path, ENDPOINTS.openapi.path]);
/**
 * Paths of the table's keyless rows that hold an `{id}`: the signed atlas URL. A key sent there
 * is neither needed nor read (the signature alone opens it).
 */
const PUBLIC_PATTERNS = (Object.values(ENDPOINTS) as EndpointSpec[])
  .filter((ep) => !ep.auth && ep.path.includes('{id}'))
  .map((ep) => new RegExp(`^${ep.path.replace('{id}', '[^/]+')}$`));

const isPublicPath = (path: string) =>
  PUBLIC_PATHS.has(path) || PUBLIC_PATTERNS.some((p) => p.test(path));

/** The HTTP API: middleware (request id, auth, rate limit, errors) and the routes. */
export function createApp(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const limiter = new RateLimiter(deps.limits.requestsPerSecond, deps.limits.requestBurst);
  const keys = new KeyLookups(deps.store);

  // Our own `req_` ids only: a caller's X-Request-Id is not taken over (headerName ''), so the
  // header is set below, on every answer, errors included.
  app.use(requestId({ headerName: '', generator: () => newId(ID_PREFIXES.request) }));
  app.use(async (c, next) => {
    const log = deps.log.child({ request_id: c.get('requestId') });
    c.set('log', log);
    const started = performance.now();
    await next();
    c.res.headers.set(HEADERS.requestId, c.get('requestId'));
    log.info(
      {
        method: c.req.method,
        path: c.req.path,
        status: c.res.status,
        ms: Math.round(performance.now() - started),
      },
      'request',
    );
  });

  app.use('/v1/*', async (c, next) => {
    if (isPublicPath(c.req.path)) return next();
    const header = c.req.header('authorization') ?? null;
    const secret = secretOf(header);
    if (secret) c.set('secretHash', hashSecret(secret));
    if (c.req.method === 'POST' && c.req.path === ENDPOINTS.createSession.path && secret) {
      // A key at its cap by this node's count is refused here, before any query (a burst of
      // creates, a retry storm): createAdmission.ts.
      const refusal = deps.sessions.refusalFromMemory(c.get('secretHash'));
      if (refusal) throw refusal;
    }
    const key = await authenticate(keys, header);
    c.set('key', key);
    const wait = limiter.take(key.id);
    if (wait > 0) {
      throw new ApiError('too_many_requests', 'Too many requests for this key; slow down.', {
        headers: { 'retry-after': String(wait) },
      });
    }
    return next();
  });

  // A known path with another method: 405 with `Allow` (hono's), in the error envelope.
  app.use(
    methodNotAllowed({
      app,
      onMethodNotAllowed: (c, methods) => {
        const allowed = methods.filter((m) => m !== 'HEAD');
        return errorResponse(
          c,
          new ApiError(
            'method_not_allowed',
            `${c.req.method} is not allowed on ${c.req.path}; use ${allowed.join(' or ')}.`,
            { headers: { allow: methods.join(', ') } },
          ),
        );
      },
    }),
  );
  // `/v1/sessions/*` matches `/v1/sessions` itself too: one count per answer, not two.
  app.use('/v1/sessions/*', (c, next) => withConcurrencyHeaders(c, next, deps));

  mountPathIdChecks(app);
  mountBodyLimits(app, deps.limits);
  mountMetaRoutes(app, deps);
  mountFileRoutes(app, deps);
  mountVoiceRoutes(app, deps);
  mountAvatarAtlasRoute(app, deps);
  mountAvatarRoutes(app, deps);
  mountSessionRoutes(app, deps);
  for (const pages of deps.pages ?? []) {
    if (pages.path === '/v1' || pages.path.startsWith('/v1/')) {
      throw new Error(`pages cannot be mounted under /v1 (${pages.path}): that is the API's`);
    }
    app.route(pages.path, pages.app);
  }

  app.notFound((c) =>
    errorResponse(c, new ApiError('route_not_found', `No route ${c.req.method} ${c.req.path}.`)),
  );
  app.onError((err, c) => {
    if (err instanceof ApiError) return errorResponse(c, err);
    if (err instanceof SessionError || err instanceof AssetError) {
      return errorResponse(c, apiErrorOf(err));
    }
    if (c.req.raw.signal.aborted) {
      // The client went away (closed the connection mid-request): nothing to answer, no fault.
      c.get('log').info({ reason: String(c.req.raw.signal.reason ?? err) }, 'client aborted');
      return c.body(null, CLIENT_CLOSED_REQUEST as 200);
    }
    if (err instanceof DatabaseUnavailableError) {
      // The driver's own words say which: refused, reset, or no pooled connection free in time.
      c.get('log').warn({ err: err.message, cause: String(err.cause) }, 'database unavailable');
      return errorResponse(
        c,
        new ApiError('database_unavailable', `The database is ${err.reason}; retry shortly.`, {
          headers: { 'retry-after': '1' },
        }),
      );
    }
    c.get('log').error({ err }, 'unhandled error');
    return errorResponse(c, new ApiError('internal', 'Internal error; quote the request id.'));
  });
  return app;
}

async function withConcurrencyHeaders(
  c: Context<AppEnv>,
  next: () => Promise<void>,
  deps: AppDeps,
) {
  await next();
  await setConcurrencyHeaders(c, deps);
}
