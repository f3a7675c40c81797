// SPDX-License-Identifier: GPL-3.0-or-later
import type { IncomingMessage, ServerResponse } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import type { Hono } from 'hono';
import { ENDPOINTS, HEADERS, ID_PREFIXES, newId } from '@visage-avatar/client/api';
import type { Logger } from 'pino';
import { hashSecret } from '../store/store.js';
import { apiErrorOf, type ApiError } from './apiError.js';
import type { SessionError } from '../sessions/sessionErrors.js';
import type { CreateLull } from './createLull.js';
import { CreateQueue } from './createQueue.js';
import { secretOf } from './authenticate.js';
import { errorEnvelope } from './errorResponse.js';
import type { AppDeps, AppEnv } from './routes/context.js';
import { healthOf } from './routes/meta.js';

/**
 * The API's HTTP listener. Two answers are given here, in the callback that parsed the request,
 * without a framework's request and response objects: `GET /healthz` (liveness, from memory) and
 * the refusal of a create whose key is at its cap by this node's count; creates of a key whose
 * count is being learnt wait here for it (createQueue.ts). A burst of creates (a retry storm) is
 * then mostly refusals that cost a fraction of a millisecond each, and a health probe is never
 * queued behind them. Everything else, and every other case of these two paths,
 * goes to the hono app (app.ts), whose middleware gives the same answers the long way: a test
 * holds the two to the same bytes (test/server/frontDoor.test.ts).
 */
export function frontDoor(
  app: Hono<AppEnv>,
  deps: AppDeps,
  lull?: CreateLull,
): (req: IncomingMessage, res: ServerResponse) => void {
  const api = getRequestListener(app.fetch);
  const creates = new CreateQueue(deps.sessions);
  // The answer of each refusal, made once: the refusals of a burst are a few values
  // (sessionCreation.ts), and an ApiError per refusal is another stack to capture.
  const refusalAnswers = new WeakMap<SessionError, ApiError>();
  return (req, res) => {
    const started = performance.now();
    const path = req.url;
    if (path === ENDPOINTS.health.path && (req.method === 'GET' || req.method === 'HEAD')) {
      answer({ req, res, started, log: deps.log }, 200, {}, healthOf(deps));
      return;
    }
    const create = req.method === 'POST' && path === ENDPOINTS.createSession.path;
    if (create) lull?.seen();
    const secret = create ? secretOf(req.headers.authorization ?? null) : undefined;
    if (secret === undefined) {
      void api(req, res);
      return;
    }
    creates.route(hashSecret(secret), {
      refuse: (refusal) => {
        // The body is not needed: read and dropped, so that the connection can carry the next.
        req.resume();
        const requestId = newId(ID_PREFIXES.request);
        let apiError = refusalAnswers.get(refusal);
        if (!apiError) refusalAnswers.set(refusal, (apiError = apiErrorOf(refusal)));
        const { status, headers, body } = errorEnvelope(apiError, requestId);
        answer({ req, res, started, log: deps.log }, status, headers, body, requestId);
      },
      pass: (closed) => {
        res.once('close', closed);
        void api(req, res);
      },
    });
  };
}

interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  /** When the request reached the listener. */
  started: number;
  log: Logger;
}

/** A JSON answer as app.ts would give it: the request id in its header, and one log line. */
function answer(
  { req, res, started, log }: Exchange,
  status: number,
  headers: Record<string, string>,
  body: unknown,
  requestId = newId(ID_PREFIXES.request),
): void {
  const text = JSON.stringify(body);
  const head = req.method === 'HEAD';
  res.writeHead(status, {
    ...headers,
    'content-type': 'application/json',
    ...(head ? {} : { 'content-length': Buffer.byteLength(text) }),
    [HEADERS.requestId]: requestId,
  });
  res.end(head ? undefined : text);
  log.info(
    {
      request_id: requestId,
      method: req.method,
      path: req.url,
      status,
      ms: Math.round(performance.now() - started),
    },
    'request',
  );
}
