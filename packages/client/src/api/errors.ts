// SPDX-License-Identifier: Apache-2.0
import { z } from 'zod';
import { ID_PREFIXES } from './idFormat.js';
import { idSchema } from './ids.js';

/**
 * Every error the API can answer, with its HTTP status and `error.type` (docs/api.md, Errors).
 * The server throws by code; the client and the OpenAPI document read the same table.
 */
export const ERROR_CODES = {
  malformed_request: { status: 400, type: 'invalid_request' },
  invalid_json: { status: 400, type: 'invalid_request' },
  unknown_field: { status: 400, type: 'invalid_request' },
  validation_failed: { status: 400, type: 'invalid_request' },
  invalid_voice_source: { status: 400, type: 'invalid_request' },
  text_too_long: { status: 400, type: 'invalid_request' },
  url_not_allowed: { status: 400, type: 'invalid_request' },
  url_unreachable: { status: 400, type: 'invalid_request' },
  invalid_livekit_token: { status: 400, type: 'invalid_request' },
  missing_api_key: { status: 401, type: 'authentication' },
  invalid_api_key: { status: 401, type: 'authentication' },
  invalid_signature: { status: 403, type: 'authentication' },
  session_not_found: { status: 404, type: 'not_found' },
  voice_not_found: { status: 404, type: 'not_found' },
  file_not_found: { status: 404, type: 'not_found' },
  avatar_not_found: { status: 404, type: 'not_found' },
  route_not_found: { status: 404, type: 'not_found' },
  method_not_allowed: { status: 405, type: 'invalid_request' },
  session_ended: { status: 409, type: 'conflict' },
  session_waiting: { status: 409, type: 'conflict' },
  room_not_available: { status: 409, type: 'conflict' },
  voice_not_deletable: { status: 409, type: 'conflict' },
  participant_token_unavailable: { status: 409, type: 'conflict' },
  avatar_not_deletable: { status: 409, type: 'conflict' },
  file_too_large: { status: 413, type: 'invalid_request' },
  body_too_large: { status: 413, type: 'invalid_request' },
  unsupported_media_type: { status: 415, type: 'invalid_request' },
  headers_too_large: { status: 431, type: 'invalid_request' },
  unsupported_audio: { status: 415, type: 'invalid_request' },
  unsupported_image: { status: 415, type: 'invalid_request' },
  clip_too_short: { status: 422, type: 'invalid_request' },
  clip_too_long: { status: 422, type: 'invalid_request' },
  unreadable_audio: { status: 422, type: 'invalid_request' },
  no_speech: { status: 422, type: 'invalid_request' },
  unreadable_image: { status: 422, type: 'invalid_request' },
  image_too_large: { status: 422, type: 'invalid_request' },
  no_face_found: { status: 422, type: 'invalid_request' },
  face_too_small: { status: 422, type: 'invalid_request' },
  multiple_faces: { status: 422, type: 'invalid_request' },
  face_not_frontal: { status: 422, type: 'invalid_request' },
  concurrency_cap: { status: 429, type: 'rate_limit' },
  platform_busy: { status: 429, type: 'rate_limit' },
  too_many_requests: { status: 429, type: 'rate_limit' },
  internal: { status: 500, type: 'api_error' },
  tts_provider_error: { status: 502, type: 'api_error' },
  media_unavailable: { status: 503, type: 'unavailable' },
  tts_provider_unavailable: { status: 503, type: 'unavailable' },
  database_unavailable: { status: 503, type: 'unavailable' },
} as const satisfies Record<string, { status: number; type: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;
export type ErrorType = (typeof ERROR_CODES)[ErrorCode]['type'];

export const errorCodeSchema = z.enum(Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]]);

export const errorEnvelopeSchema = z
  .object({
    error: z.object({
      type: z.string().meta({ example: 'rate_limit' }),
      code: z.string().meta({ example: 'concurrency_cap' }),
      message: z.string(),
      request_id: idSchema(ID_PREFIXES.request),
      param: z.string().optional(),
    }),
  })
  .meta({ id: 'ErrorEnvelope' });

export type ErrorEnvelope = z.infer<typeof errorEnvelopeSchema>;

/** Retry-After (seconds) sent with the two capacity errors, as the specification fixes it. */
export const CAPACITY_RETRY_AFTER_SECONDS = 10;
