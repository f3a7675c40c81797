import type { Hono } from 'hono';
import { ENDPOINTS } from '../../api/index.js';
import { AVATAR_CATALOGUE } from '../../media/avatarCatalogue.js';
import { avatarToWire } from '../wire.js';
import type { AppEnv } from './context.js';

export function mountCatalogueRoutes(app: Hono<AppEnv>): void {
  app.get(ENDPOINTS.listAvatars.path, (c) =>
    c.json({ data: AVATAR_CATALOGUE.map(avatarToWire), has_more: false }),
  );
}
