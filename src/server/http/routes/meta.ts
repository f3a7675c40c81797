import type { Hono } from 'hono';
import { ENDPOINTS } from '../../../api/index.js';
import { buildOpenApiDocument } from '../../../api/openapi.js';
import type { AppDeps, AppEnv } from './context.js';

export function mountMetaRoutes(app: Hono<AppEnv>, deps: AppDeps): void {
  const openapi = buildOpenApiDocument(deps.version);
  app.get(ENDPOINTS.health.path, (c) =>
    c.json({ status: 'ok', version: deps.version, media: deps.mediaKind }),
  );
  app.get(ENDPOINTS.openapi.path, (c) => c.json(openapi));
}
