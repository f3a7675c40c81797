import type { Context } from 'hono';
import type { ApiError } from './apiError.js';
import type { AppEnv } from './routes/context.js';

/** The error envelope of the specification for `err`, with its request id and headers. */
export function errorResponse(c: Context<AppEnv>, err: ApiError): Response {
  const body = {
    error: {
      type: err.type,
      code: err.code,
      message: err.message,
      request_id: c.get('requestId'),
      ...(err.options.param ? { param: err.options.param } : {}),
    },
  };
  const res = c.json(body, err.status as 400);
  for (const [name, value] of Object.entries(err.options.headers ?? {})) {
    res.headers.set(name, value);
  }
  return res;
}
