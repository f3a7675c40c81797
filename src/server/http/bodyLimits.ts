import type { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { ENDPOINTS, type EndpointSpec } from '../../api/index.js';
import { ApiError } from '../apiError.js';
import type { Limits } from '../config.js';
import type { AppEnv } from '../routes/context.js';
import { errorResponse } from './errorResponse.js';
import { honoPath } from './honoPath.js';

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
    const upload = ep.bodyKind === 'multipart';
    const maxSize =
      ep.bodyKind === 'json' || ep.bodyKind === 'optional-json'
        ? limits.jsonBodyBytes
        : limits.fileBytes + (upload ? MULTIPART_OVERHEAD : 0);
    const limit = bodyLimit({
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
    app.on(ep.method, honoPath(ep.path), limit);
  }
}
