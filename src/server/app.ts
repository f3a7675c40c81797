import { Hono, type Context } from 'hono';
import { ENDPOINTS, HEADERS, ID_PREFIXES, newId, type EndpointSpec } from '../api/index.js';
import { ApiError } from './apiError.js';
import { DatabaseUnavailableError } from './store/databaseUnavailable.js';
import { authenticate } from './http/authenticate.js';
import { RateLimiter } from './http/rateLimiter.js';
import { mountAvatarRoutes } from './routes/avatars.js';
import type { AppDeps, AppEnv } from './routes/context.js';
import { mountFileRoutes } from './routes/files.js';
import { mountMetaRoutes } from './routes/meta.js';
import { mountPathIdChecks } from './routes/pathIds.js';
import { honoPath, mountSessionRoutes, setConcurrencyHeaders } from './routes/sessions.js';
import { mountVoiceRoutes } from './routes/voices.js';

export type { AppDeps } from './routes/context.js';

/** nginx's status for a request the client abandoned; never sent (nobody is listening). */
const CLIENT_CLOSED_REQUEST = 499;

const PUBLIC_PATHS = new Set<string>([ENDPOINTS.health.path, ENDPOINTS.openapi.path]);

/** The HTTP API: middleware (request id, auth, rate limit, errors) and the routes. */
export function createApp(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const limiter = new RateLimiter(deps.limits.requestsPerSecond, deps.limits.requestBurst);

  app.use(async (c, next) => {
    const requestId = newId(ID_PREFIXES.request);
    const log = deps.log.child({ request_id: requestId });
    c.set('requestId', requestId);
    c.set('log', log);
    const started = performance.now();
    await next();
    c.res.headers.set(HEADERS.requestId, requestId);
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
    if (PUBLIC_PATHS.has(c.req.path)) return next();
    const key = await authenticate(deps.store, c.req.header('authorization') ?? null);
    c.set('key', key);
    const wait = limiter.take(key.id);
    if (wait > 0) {
      throw new ApiError('too_many_requests', 'Too many requests for this key; slow down.', {
        headers: { 'retry-after': String(wait) },
      });
    }
    return next();
  });

  app.use('/v1/sessions', (c, next) => withConcurrencyHeaders(c, next, deps));
  app.use('/v1/sessions/*', (c, next) => withConcurrencyHeaders(c, next, deps));

  mountPathIdChecks(app);
  mountMetaRoutes(app, deps);
  mountFileRoutes(app, deps);
  mountVoiceRoutes(app, deps);
  mountAvatarRoutes(app, deps);
  mountSessionRoutes(app, deps);
  mountMethodNotAllowed(app);

  app.notFound((c) =>
    errorResponse(c, new ApiError('route_not_found', `No route ${c.req.method} ${c.req.path}.`)),
  );
  app.onError((err, c) => {
    if (err instanceof ApiError) return errorResponse(c, err);
    if (c.req.raw.signal.aborted) {
      // The client went away (closed the connection mid-request): nothing to answer, no fault.
      c.get('log').info({ reason: String(c.req.raw.signal.reason ?? err) }, 'client aborted');
      return c.body(null, CLIENT_CLOSED_REQUEST as 200);
    }
    if (err instanceof DatabaseUnavailableError) {
      c.get('log').warn({ err: err.message }, 'database unavailable');
      return errorResponse(
        c,
        new ApiError('database_unavailable', 'The database is unreachable; retry shortly.', {
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

/** Known paths with an unsupported method answer 405 with `Allow`, not 404. */
function mountMethodNotAllowed(app: Hono<AppEnv>): void {
  const methods = new Map<string, string[]>();
  for (const ep of Object.values(ENDPOINTS) as EndpointSpec[]) {
    const path = honoPath(ep.path);
    methods.set(path, [...(methods.get(path) ?? []), ep.method]);
  }
  for (const [path, allowed] of methods) {
    app.all(path, (c) => {
      throw new ApiError(
        'method_not_allowed',
        `${c.req.method} is not allowed on ${c.req.path}; use ${allowed.join(' or ')}.`,
        { headers: { allow: allowed.join(', ') } },
      );
    });
  }
}

function errorResponse(c: Context<AppEnv>, err: ApiError): Response {
  const requestId = c.get('requestId');
  const body = {
    error: {
      type: err.type,
      code: err.code,
      message: err.message,
      request_id: requestId,
      ...(err.options.param ? { param: err.options.param } : {}),
    },
  };
  const res = c.json(body, err.status as 400);
  for (const [name, value] of Object.entries(err.options.headers ?? {})) {
    res.headers.set(name, value);
  }
  return res;
}
