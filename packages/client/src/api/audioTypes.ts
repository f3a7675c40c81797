// SPDX-License-Identifier: Apache-2.0
/**
 * The audio the `/v1/sessions/{id}/audio` endpoint accepts as its body, by media type (lower
 * case, parameters aside). The first of each group is the canonical name the documentation and
 * the OpenAPI document show; the others are aliases clients send. `audio/L16` takes
 * `;rate=N;channels=1` (big-endian per RFC 2586).
 */
export const AUDIO_PAYLOAD_TYPES = [
  ['audio/wav', 'audio/x-wav', 'audio/wave'],
  ['audio/mpeg', 'audio/mp3'],
  ['audio/ogg', 'audio/opus'],
  ['audio/webm'],
  ['audio/flac'],
  ['audio/mp4', 'audio/m4a', 'audio/aac'],
  ['audio/L16'],
] as const;

/** Canonical names, e.g. for the OpenAPI request body. */
export const AUDIO_PAYLOAD_CANONICAL_TYPES: readonly string[] = AUDIO_PAYLOAD_TYPES.map(
  (g) => g[0],
);

const accepted = new Set<string>(AUDIO_PAYLOAD_TYPES.flat().map((t) => t.toLowerCase()));

/** Whether a media type (any case, parameters dropped) is an accepted audio payload. */
export function isAudioPayloadType(mediaType: string): boolean {
  return accepted.has(mediaType.toLowerCase());
}

/** The accepted types as people read them, for error messages and summaries. */
export const AUDIO_PAYLOAD_TYPES_TEXT = `${AUDIO_PAYLOAD_CANONICAL_TYPES.filter((t) => t !== 'audio/L16').join(', ')}, audio/L16;rate=N;channels=1`;
