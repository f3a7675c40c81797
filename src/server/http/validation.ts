// SPDX-License-Identifier: GPL-3.0-or-later
import type { z } from 'zod';
import { ERROR_CODES, NOT_FOUND_PARAM, type ErrorCode } from '@visage-avatar/client/api';
import { ApiError } from './apiError.js';

/** Turns the first zod issue into the API's error: unknown fields get their own code. */
export function validationError(error: z.ZodError, where: 'body' | 'query'): ApiError {
  const issue = error.issues[0]!;
  if (issue.code === 'unrecognized_keys') {
    const field = issue.keys[0]!;
    const param = [...issue.path.map(String), field].join('.');
    return new ApiError('unknown_field', `Unknown field \`${param}\` in the ${where}.`, { param });
  }
  const param = issue.path.map(String).join('.') || undefined;
  // An id field whose value is not such an id answers like an unknown id (ids.ts, idRefSchema).
  const notFound = issue.code === 'custom' ? issue.params?.[NOT_FOUND_PARAM] : undefined;
  if (typeof notFound === 'string' && notFound in ERROR_CODES) {
    return new ApiError(notFound as ErrorCode, `\`${param}\`: ${issue.message}.`, { param });
  }
  const message = param ? `\`${param}\`: ${issue.message}` : `Invalid ${where}: ${issue.message}`;
  return new ApiError('validation_failed', message, { param });
}

export function parseWith<S extends z.ZodType>(
  schema: S,
  value: unknown,
  where: 'body' | 'query',
): z.output<S> {
  const r = schema.safeParse(value);
  if (!r.success) throw validationError(r.error, where);
  return r.data;
}

/** The media type of a Content-Type header, lower-cased, parameters dropped. */
export function mediaType(contentType: string | null | undefined): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}

export function isJsonType(contentType: string | null | undefined): boolean {
  const t = mediaType(contentType);
  return t === 'application/json' || t.endsWith('+json');
}

/**
 * Parses a JSON body strictly: JSON content type, well-formed JSON, then the schema. The body's
 * size is bounded before this reads it (bodyLimits.ts).
 */
export async function parseJsonBody<S extends z.ZodType>(
  req: Request,
  schema: S,
  options: { optional?: boolean } = {},
): Promise<z.output<S>> {
  const bytes = new Uint8Array(await req.arrayBuffer());
  if (bytes.byteLength === 0 && options.optional) return parseWith(schema, {}, 'body');
  if (!isJsonType(req.headers.get('content-type'))) {
    throw new ApiError(
      'unsupported_media_type',
      'This endpoint takes a JSON body: send `Content-Type: application/json`.',
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    throw new ApiError('invalid_json', 'The request body is not valid UTF-8 JSON.');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new ApiError('validation_failed', 'The request body must be a JSON object.');
  }
  return parseWith(schema, value, 'body');
}
