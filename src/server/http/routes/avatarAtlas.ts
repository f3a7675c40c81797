// SPDX-License-Identifier: GPL-3.0-or-later
import type { Hono } from 'hono';
import { avatarAtlasQuerySchema, ENDPOINTS } from '@visage-avatar/client/api';
import { chooseAtlasEncoding } from '../../assets/atlasDelivery.js';
import { ApiError } from '../apiError.js';
import { honoPath } from '../honoPath.js';
import type { AppDeps, AppEnv } from './context.js';

/**
 * `GET /v1/avatars/{id}/atlas?expires=&sig=`: an avatar's atlas for a renderer in the browser.
 * No API key (the middleware lets this path through): the signed URL is the credential, scoped
 * to one avatar until its expiry. The signature is checked before the avatar is looked up, so a
 * caller without one learns nothing about which avatars exist; a missing, malformed, expired or
 * wrong signature is one answer (403 `invalid_signature`), which does not say which.
 */
export function mountAvatarAtlasRoute(app: Hono<AppEnv>, deps: AppDeps): void {
  // Open to every origin, errors included: the URL is the credential, not the page that uses it.
  const cors = { 'access-control-allow-origin': '*' };
  app.get(honoPath(ENDPOINTS.getAvatarAtlas.path), async (c) => {
    const id = c.req.param('id') ?? '';
    const q = avatarAtlasQuerySchema.safeParse(c.req.query());
    const left = q.success
      ? await deps.atlasSigner.verify(id, q.data.expires, q.data.sig)
      : undefined;
    if (left === undefined) {
      throw new ApiError(
        'invalid_signature',
        'This atlas URL is not valid (expired or not signed here).',
        {
          headers: cors,
        },
      );
    }
    const avatar = await deps.store.findAvatar(id);
    if (!avatar) throw new ApiError('avatar_not_found', `No avatar \`${id}\`.`, { headers: cors });
    const encoding = chooseAtlasEncoding(c.req.header('accept-encoding'));
    const headers: Record<string, string> = {
      ...cors,
      'content-type': 'application/octet-stream',
      // The URL never changes for its life, nor does what it names: caches need not ask again.
      'cache-control': `public, max-age=${left}, immutable`,
      vary: 'accept-encoding',
      'cross-origin-resource-policy': 'cross-origin',
    };
    // A copy the client holds is good whether or not this node has compressed it yet.
    const etag = `"${deps.atlasDelivery.version(avatar)}-${encoding}"`;
    const match = c.req.header('if-none-match');
    if (match && match.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag)) {
      return c.body(null, 304, { ...headers, etag });
    }
    if (encoding !== 'identity') headers['content-encoding'] = encoding;
    let delivered;
    try {
      delivered = await deps.atlasDelivery.atlas(avatar, encoding);
    } catch (err) {
      // Deleted between the lookup and the read.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      throw new ApiError('avatar_not_found', `No avatar \`${id}\`.`, { headers: cors });
    }
    if (delivered.kept) {
      headers.etag = etag;
    } else {
      // A fast compression, larger than the kept one that is on its way: no cache keeps it.
      headers['cache-control'] = 'no-store';
    }
    return c.body(delivered.bytes as Uint8Array<ArrayBuffer>, 200, headers);
  });
}
