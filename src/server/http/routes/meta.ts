// SPDX-License-Identifier: GPL-3.0-or-later
import type { Hono } from 'hono';
import {
  buildOpenApiDocument,
  ENDPOINTS,
  type Health,
  type Readiness,
} from '@visage-avatar/client/api';
import type { AppDeps, AppEnv } from './context.js';

export function mountMetaRoutes(app: Hono<AppEnv>, deps: AppDeps): void {
  const openapi = buildOpenApiDocument(deps.version);
  app.get(ENDPOINTS.health.path, (c) => c.json(healthOf(deps)));
  app.get(ENDPOINTS.readiness.path, async (c) => {
    await deps.readiness();
    return c.json({ ...healthOf(deps), status: 'ready' } satisfies Readiness);
  });
  app.get(ENDPOINTS.openapi.path, (c) => c.json(openapi));
}

/** Liveness, from memory: the process is up and its event loop answers (frontDoor.ts). */
export function healthOf(deps: Pick<AppDeps, 'version' | 'mediaKind'>): Health {
  return { status: 'ok', version: deps.version, media: deps.mediaKind };
}
