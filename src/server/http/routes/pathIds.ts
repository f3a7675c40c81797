// SPDX-License-Identifier: GPL-3.0-or-later
import type { Hono } from 'hono';
import { ENDPOINTS, isIdOf, type EndpointSpec } from '@visage-avatar/client/api';
import { ApiError } from '../apiError.js';
import type { AppEnv } from './context.js';
import { honoPath } from '../honoPath.js';

/**
 * Checks the `{id}` of every endpoint whose row names its ids (`pathId`) before any handler or
 * lookup runs: a value that is not such an id (NUL bytes, another kind, garbage) answers the
 * resource's 404, exactly like a well-formed id that does not exist.
 */
export function mountPathIdChecks(app: Hono<AppEnv>): void {
  const checked = new Set<string>();
  for (const ep of Object.values(ENDPOINTS) as EndpointSpec[]) {
    const ref = ep.pathId;
    if (!ref || checked.has(ep.path)) continue;
    checked.add(ep.path);
    app.use(honoPath(ep.path), async (c, next) => {
      const id = c.req.param('id') ?? '';
      if (!isIdOf(ref.prefixes, id)) {
        throw new ApiError(ref.notFound, `No ${ref.noun} with this id.`);
      }
      await next();
    });
  }
}
