// SPDX-License-Identifier: GPL-3.0-or-later
import type { Context } from 'hono';
import type { ApiError } from './apiError.js';
import type { AppEnv } from './routes/context.js';

/** The error envelope of the specification for `err`: its status, headers and body. */
export function errorEnvelope(
  err: ApiError,
  requestId: string,
): { status: number; headers: Record<string, string>; body: unknown } {
  const body = {
    error: {
      type: err.type,
      code: err.code,
      message: err.message,
      request_id: requestId,
      ...(err.options.param ? { param: err.options.param } : {}),
    },
  };
  return { status: err.status, headers: err.options.headers ?? {}, body };
}

/** The error envelope of the specification for `err`, with its request id and headers. */
export function errorResponse(c: Context<AppEnv>, err: ApiError): Response {
  const { status, headers, body } = errorEnvelope(err, c.get('requestId'));
  const res = c.json(body, status as 400);
  for (const [name, value] of Object.entries(headers)) res.headers.set(name, value);
  return res;
}
