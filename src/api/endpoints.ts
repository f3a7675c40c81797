import type { z } from 'zod';
import { errorEnvelopeSchema } from './errors.js';
import {
  audioFileRequestSchema,
  createSessionRequestSchema,
  createVoiceRequestSchema,
  interruptRequestSchema,
  listQuerySchema,
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
  readonly summary: string;
  readonly status: number;
  readonly auth: boolean;
  /** JSON body schema; `multipart` and `audio` bodies are described in prose. */
  readonly body?: z.ZodType;
  readonly bodyKind?: 'json' | 'optional-json' | 'multipart' | 'audio';
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
    response: fileSchema,
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
    query: listQuerySchema,
    response: listSchema(voiceSchema),
  },
  listAvatars: {
    method: 'GET',
    path: '/v1/avatars',
    summary: 'List the built-in avatar catalogue.',
    status: 200,
    auth: true,
    response: listSchema(avatarSchema),
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
    summary: 'Fetch one session.',
    status: 200,
    auth: true,
    response: sessionSchema,
    sessionHeaders: true,
  },
  speak: {
    method: 'POST',
    path: '/v1/sessions/{id}/speak',
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
    summary:
      'Queue audio for the avatar to speak: the body is the audio (audio/wav, audio/mpeg, audio/ogg, audio/webm, audio/L16;rate=N;channels=1) or JSON { file_id }.',
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
    summary: 'Mint a fresh participant token for a live session (no second slot).',
    status: 200,
    auth: true,
    response: participantTokenSchema,
    sessionHeaders: true,
  },
  deleteSession: {
    method: 'DELETE',
    path: '/v1/sessions/{id}',
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
    summary: 'Liveness.',
    status: 200,
    auth: false,
    response: healthSchema,
  },
} as const satisfies Record<string, EndpointSpec>;

export type EndpointName = keyof typeof ENDPOINTS;

export { errorEnvelopeSchema };
