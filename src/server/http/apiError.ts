// SPDX-License-Identifier: GPL-3.0-or-later
import {
  CAPACITY_RETRY_AFTER_SECONDS,
  ERROR_CODES,
  HEADERS,
  type ErrorCode,
} from '@visage-avatar/client/api';
import { AssetError } from '../assets/assetError.js';
import { CapacityRefusedError, type SessionError } from '../sessions/sessionErrors.js';

/** An error that maps to one row of the error table; anything else becomes 500 `internal`. */
export class ApiError extends Error {
  readonly status: number;
  readonly type: string;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly options: { param?: string; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = ERROR_CODES[code].status;
    this.type = ERROR_CODES[code].type;
  }
}

/**
 * A refusal of the session domain or the asset side as the HTTP answer gives it: its code,
 * message and param; a capacity refusal adds Retry-After and the count that refused it (so the
 * answer needs no second count: routes/sessions.ts), a busy builder its Retry-After.
 */
export function apiErrorOf(err: SessionError | AssetError): ApiError {
  if (err instanceof AssetError) {
    return new ApiError(err.code, err.message, {
      ...(err.param ? { param: err.param } : {}),
      ...(err.retryAfterSeconds !== undefined
        ? { headers: { [HEADERS.retryAfter]: String(err.retryAfterSeconds) } }
        : {}),
    });
  }
  if (err instanceof CapacityRefusedError) {
    return new ApiError(err.code, err.message, {
      headers: {
        [HEADERS.retryAfter]: String(CAPACITY_RETRY_AFTER_SECONDS),
        [HEADERS.concurrentSessions]: String(err.active),
        [HEADERS.maxConcurrentSessions]: String(err.cap),
      },
    });
  }
  return new ApiError(err.code, err.message, err.param ? { param: err.param } : {});
}
