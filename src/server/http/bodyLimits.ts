// SPDX-License-Identifier: GPL-3.0-or-later
import type { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { ENDPOINTS, type EndpointSpec } from '@visage-avatar/client/api';
import { ApiError } from './apiError.js';
import type { Limits } from '../config.js';
import type { AppEnv } from './routes/context.js';
import { errorResponse } from './errorResponse.js';
import { honoPath } from './honoPath.js';
import { isJsonType } from './validation.js';

/** Room for the multipart framing and small fields around an upload's file part. */
const MULTIPART_OVERHEAD = 64 * 1024;

/**
 * Bounds every request body before a handler reads it (hono's body-limit: a declared length over
 * the bound is refused before reading, a chunked body as soon as it grows past it), by the kind of
 * body the endpoint table gives each route: JSON, a multipart upload, or audio.
 */
export function mountBodyLimits(app: Hono<AppEnv>, limits: Limits): void {
  for (const ep of Object.values(ENDPOINTS) as EndpointSpec[]) {
    if (!ep.bodyKind) continue;
    const path = honoPath(ep.path);
    if (ep.bodyKind === 'image') {
      // A picture: uploaded (multipart) or named by URL (JSON, bounded as JSON).
      const json = limitFor('json', limits);
      const upload = limitFor('multipart', limits);
      app.on(ep.method, path, (c, next) =>
        isJsonType(c.req.header('content-type')) ? json(c, next) : upload(c, next),
      );
      continue;
    }
    app.on(ep.method, path, limitFor(ep.bodyKind, limits));
  }
}

/** hono's body-limit for one kind of body, answering with the error envelope. */
function limitFor(kind: 'json' | 'optional-json' | 'multipart' | 'audio', limits: Limits) {
  const upload = kind === 'multipart';
  const maxSize =
    kind === 'json' || kind === 'optional-json'
      ? limits.jsonBodyBytes
      : limits.fileBytes + (upload ? MULTIPART_OVERHEAD : 0);
  return bodyLimit({
    maxSize,
    onError: (c) =>
      errorResponse(
        c,
        new ApiError(
          upload ? 'file_too_large' : 'body_too_large',
          upload
            ? `Uploads are limited to ${limits.fileBytes} bytes.`
            : `The request body is larger than ${maxSize} bytes.`,
          // The rest of the body is never read: the connection cannot carry another request.
          { headers: { connection: 'close' } },
        ),
      ),
  });
}
