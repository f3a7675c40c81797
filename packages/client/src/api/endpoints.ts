// SPDX-License-Identifier: Apache-2.0
import type { z } from 'zod';
import { AUDIO_PAYLOAD_TYPES_TEXT } from './audioTypes.js';
import { errorEnvelopeSchema } from './errors.js';
import { AVATAR_ID, FILE_ID, SESSION_ID, VOICE_ID, type IdRef } from './ids.js';
import {
  audioFileRequestSchema,
  createAvatarFormSchema,
  createAvatarRequestSchema,
  listAvatarsQuerySchema,
  avatarAtlasQuerySchema,
  createSessionRequestSchema,
  createVoiceRequestSchema,
  interruptRequestSchema,
  listQuerySchema,
  listVoicesQuerySchema,
  listSessionsQuerySchema,
  speakRequestSchema,
  waitingStateRequestSchema,
  audioQuerySchema,
} from './requests.js';
import {
  avatarSchema,
  createdSessionSchema,
  fileSchema,
  healthSchema,
  readinessSchema,
  interruptResultSchema,
  listSchema,
  participantTokenSchema,
  sessionSchema,
  utteranceAcceptedSchema,
  voiceSchema,
} from './resources.js';

/**
 * The endpoint table: one row per route. The server mounts its handlers by these keys, the
 * OpenAPI document is generated from it, and the typed client's signatures follow it.
 */
export interface EndpointSpec {
  readonly method: 'GET' | 'POST' | 'DELETE';
  readonly path: string;
  /** The ids `{id}` in the path takes: anything else is answered with their 404 before a lookup. */
  readonly pathId?: IdRef;
  readonly summary: string;
  readonly status: number;
  readonly auth: boolean;
  /** JSON body schema; `audio` bodies are described in prose. */
  readonly body?: z.ZodType;
  /** `image`: multipart (the `multipart` description) or JSON (`body`). */
  readonly bodyKind?: 'json' | 'optional-json' | 'multipart' | 'audio' | 'image';
  /** A multipart body: its file part and the text fields beside it. */
  readonly multipart?: { readonly file: string; readonly fields?: z.ZodType };
  /** The success body when it is not JSON (`response`). */
  readonly responseType?: 'image/png' | 'application/octet-stream';
  readonly query?: z.ZodType;
  readonly response?: z.ZodType;
  /** Session endpoints carry the two concurrency headers. */
  readonly sessionHeaders?: boolean;
}

export const ENDPOINTS = {
  uploadFile: {
    method: 'POST',
    path: '/v1/files',
    summary:
      'Upload a reference clip (multipart part `file`): wav, mp3, ogg/opus, webm, m4a, flac.',
    status: 201,
    auth: true,
    bodyKind: 'multipart',
    multipart: { file: 'file' },
    response: fileSchema,
  },
  listFiles: {
    method: 'GET',
    path: '/v1/files',
    summary: "List the account's uploaded files, newest first.",
    status: 200,
    auth: true,
    query: listQuerySchema,
    response: listSchema(fileSchema),
  },
  getFile: {
    method: 'GET',
    path: '/v1/files/{id}',
    pathId: FILE_ID,
    summary:
      "One uploaded file's metadata (name, type, size, duration); the file's bytes are not served.",
    status: 200,
    auth: true,
    response: fileSchema,
  },
  deleteFile: {
    method: 'DELETE',
    path: '/v1/files/{id}',
    pathId: FILE_ID,
    summary:
      'Delete an uploaded file (idempotent, empty body). Voices made from it keep their own copy.',
    status: 204,
    auth: true,
  },
  createVoice: {
    method: 'POST',
    path: '/v1/voices',
    summary: 'Create a voice from an uploaded file or a public URL (exactly one).',
    status: 201,
    auth: true,
    body: createVoiceRequestSchema,
    bodyKind: 'json',
    response: voiceSchema,
  },
  listVoices: {
    method: 'GET',
    path: '/v1/voices',
    summary: "List the account's cloned voices and the stock voices.",
    status: 200,
    auth: true,
    query: listVoicesQuerySchema,
    response: listSchema(voiceSchema),
  },
  getVoice: {
    method: 'GET',
    path: '/v1/voices/{id}',
    pathId: VOICE_ID,
    summary: 'Fetch one voice: a cloned voice of the account or a stock voice.',
    status: 200,
    auth: true,
    response: voiceSchema,
  },
  deleteVoice: {
    method: 'DELETE',
    path: '/v1/voices/{id}',
    pathId: VOICE_ID,
    summary:
      'Delete a cloned voice (idempotent, empty body). Live sessions using it keep it until they end.',
    status: 204,
    auth: true,
  },
  createAvatar: {
    method: 'POST',
    path: '/v1/avatars',
    summary:
      'Make an avatar from a portrait photo (JPEG, PNG or WebP, one frontal face at least 96 px across; two faces of about the same size are refused, `multiple_faces`: crop to one): multipart part `image` with fields `name` and optional `voice_id`, or JSON `{ name, image_url, voice_id? }`. Built within the request.',
    status: 201,
    auth: true,
    body: createAvatarRequestSchema,
    bodyKind: 'image',
    multipart: { file: 'image', fields: createAvatarFormSchema },
    response: avatarSchema,
  },
  listAvatars: {
    method: 'GET',
    path: '/v1/avatars',
    summary: "List the account's photo avatars (newest first), then the stock avatars.",
    status: 200,
    auth: true,
    query: listAvatarsQuerySchema,
    response: listSchema(avatarSchema),
  },
  getAvatar: {
    method: 'GET',
    path: '/v1/avatars/{id}',
    pathId: AVATAR_ID,
    summary: 'Fetch one avatar: a photo avatar of the account or a stock avatar.',
    status: 200,
    auth: true,
    response: avatarSchema,
  },
  getAvatarPreview: {
    method: 'GET',
    path: '/v1/avatars/{id}/preview',
    pathId: AVATAR_ID,
    summary: "The avatar's neutral frame as a 512x512 PNG.",
    status: 200,
    auth: true,
    responseType: 'image/png',
  },
  getAvatarAtlas: {
    method: 'GET',
    path: '/v1/avatars/{id}/atlas',
    pathId: AVATAR_ID,
    summary:
      "The avatar's drawing material for a renderer in the browser (a VSGATLAS file, docs/face-stream.md), compressed (`Content-Encoding: br`, else gzip). No API key: the URL is signed (`expires`, `sig`), as a `client` mode session's `atlas_url` gives it; an expired or wrong signature is 403 `invalid_signature`. Cacheable until it expires (`Cache-Control: public, immutable`, `ETag`) once the service has compressed it; a fetch before that (moments after the avatar is made) gets a faster, larger compression marked `Cache-Control: no-store`. CORS open.",
    status: 200,
    auth: false,
    query: avatarAtlasQuerySchema,
    responseType: 'application/octet-stream',
  },
  deleteAvatar: {
    method: 'DELETE',
    path: '/v1/avatars/{id}',
    pathId: AVATAR_ID,
    summary:
      'Delete a photo avatar (idempotent, empty body). Live sessions showing it keep running; new sessions get 404.',
    status: 204,
    auth: true,
  },
  createSession: {
    method: 'POST',
    path: '/v1/sessions',
    summary: 'Start an avatar session; the response carries the participant token (a secret).',
    status: 201,
    auth: true,
    body: createSessionRequestSchema,
    bodyKind: 'json',
    response: createdSessionSchema,
    sessionHeaders: true,
  },
  listSessions: {
    method: 'GET',
    path: '/v1/sessions',
    summary: 'List sessions, newest first, optionally filtered by status.',
    status: 200,
    auth: true,
    query: listSessionsQuerySchema,
    response: listSchema(sessionSchema),
    sessionHeaders: true,
  },
  getSession: {
    method: 'GET',
    path: '/v1/sessions/{id}',
    pathId: SESSION_ID,
    summary: 'Fetch one session.',
    status: 200,
    auth: true,
    response: sessionSchema,
    sessionHeaders: true,
  },
  speak: {
    method: 'POST',
    path: '/v1/sessions/{id}/speak',
    pathId: SESSION_ID,
    summary: 'Queue text for the avatar to speak; calls are spoken in order.',
    status: 202,
    auth: true,
    body: speakRequestSchema,
    bodyKind: 'json',
    response: utteranceAcceptedSchema,
    sessionHeaders: true,
  },
  audio: {
    method: 'POST',
    path: '/v1/sessions/{id}/audio',
    pathId: SESSION_ID,
    summary: `Queue audio for the avatar to speak: the body is the audio (${AUDIO_PAYLOAD_TYPES_TEXT}) or JSON { file_id }.`,
    status: 202,
    auth: true,
    body: audioFileRequestSchema,
    bodyKind: 'audio',
    query: audioQuerySchema,
    response: utteranceAcceptedSchema,
    sessionHeaders: true,
  },
  interrupt: {
    method: 'POST',
    path: '/v1/sessions/{id}/interrupt',
    pathId: SESSION_ID,
    summary: "Cut off the avatar's current speech and drop queued utterances.",
    status: 200,
    auth: true,
    body: interruptRequestSchema,
    bodyKind: 'optional-json',
    response: interruptResultSchema,
    sessionHeaders: true,
  },
  waitingState: {
    method: 'POST',
    path: '/v1/sessions/{id}/waiting_state',
    pathId: SESSION_ID,
    summary: 'Park (waiting=true) or resume (waiting=false) the session.',
    status: 200,
    auth: true,
    body: waitingStateRequestSchema,
    bodyKind: 'json',
    response: sessionSchema,
    sessionHeaders: true,
  },
  participantToken: {
    method: 'POST',
    path: '/v1/sessions/{id}/participant_token',
    pathId: SESSION_ID,
    summary: 'Mint a fresh participant token for a live session (no second slot).',
    status: 200,
    auth: true,
    response: participantTokenSchema,
    sessionHeaders: true,
  },
  deleteSession: {
    method: 'DELETE',
    path: '/v1/sessions/{id}',
    pathId: SESSION_ID,
    summary: 'End the session and free its concurrency slot at once (idempotent, empty body).',
    status: 204,
    auth: true,
    sessionHeaders: true,
  },
  openapi: {
    method: 'GET',
    path: '/v1/openapi.json',
    summary: 'This API as an OpenAPI 3.1 document.',
    status: 200,
    auth: false,
  },
  health: {
    method: 'GET',
    path: '/healthz',
    summary: 'Liveness: the process is up and its event loop answers. From memory, never waits.',
    status: 200,
    auth: false,
    response: healthSchema,
  },
  readiness: {
    method: 'GET',
    path: '/readyz',
    summary:
      'Readiness: the node takes new sessions and its database answers within a second; 503 when not.',
    status: 200,
    auth: false,
    response: readinessSchema,
  },
} as const satisfies Record<string, EndpointSpec>;

export type EndpointName = keyof typeof ENDPOINTS;

export { errorEnvelopeSchema };
