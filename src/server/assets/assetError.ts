// SPDX-License-Identifier: GPL-3.0-or-later
import type { ErrorCode } from '@visage-avatar/client/api';

/**
 * What the asset side refuses (an upload or a voice clip that does not decode or has no speech,
 * a URL that may not or cannot be fetched, a picture with no usable face, a busy builder, a
 * provider's refusal), as a typed error: its code of the API's error table (errors.ts of the
 * wire contract, @visage-avatar/client/api) and why, in the words the caller reads. The HTTP edge
 * (`apiErrorOf` in http/apiError.ts) gives it its status, type and headers; the cluster hands it
 * between nodes as code, message and param.
 */
export class AssetError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** The request field at fault, when there is one. */
    readonly param?: string,
    /** Seconds after which a retry may succeed (a busy builder), sent as Retry-After. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'AssetError';
  }
}
