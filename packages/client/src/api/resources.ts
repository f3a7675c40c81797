// SPDX-License-Identifier: Apache-2.0
import { z } from 'zod';
import { ID_PREFIXES } from './idFormat.js';
import { idSchema } from './ids.js';

/** Resources as they appear on the wire (docs/api.md). */

const timestamp = z.iso.datetime().meta({ description: 'ISO 8601 UTC' });

export const fileSchema = z
  .object({
    file_id: idSchema(ID_PREFIXES.file),
    filename: z.string(),
    content_type: z.string(),
    bytes: z.number().int(),
    duration_ms: z.number().int(),
    created_at: timestamp,
  })
  .meta({ id: 'File' });

export const ttsEngineSchema = z.enum(['espeak', 'elevenlabs', 'cartesia']);
export type TtsEngineName = z.infer<typeof ttsEngineSchema>;

export const voiceSchema = z
  .object({
    voice_id: idSchema(ID_PREFIXES.clonedVoice, ID_PREFIXES.stockVoice),
    name: z.string(),
    status: z.literal('ready'),
    source: z.enum(['clone', 'stock']),
    /** The engine that made the voice and speaks it: `espeak` matches pitch, vocal-tract size
     * and rate; `elevenlabs` and `cartesia` clone the speaker's identity. */
    engine: ttsEngineSchema,
    created_at: timestamp,
  })
  .meta({ id: 'Voice' });

export const avatarSchema = z
  .object({
    avatar_id: idSchema(ID_PREFIXES.avatar),
    name: z.string(),
    description: z.string().optional(),
    /** `stock`: ships with Visage (drawn); `photo`: made from a portrait with POST /v1/avatars. */
    source: z.enum(['stock', 'photo']),
    status: z.literal('ready'),
    default_voice_id: idSchema(ID_PREFIXES.clonedVoice, ID_PREFIXES.stockVoice),
    /** Path of the 512x512 PNG preview (GET, with the same key). */
    preview_url: z.string(),
    created_at: timestamp,
  })
  .meta({ id: 'Avatar' });

export const SESSION_STATUSES = ['active', 'waiting', 'ended'] as const;
export const sessionStatusSchema = z.enum(SESSION_STATUSES);

/**
 * How the avatar shows its face: `video`, a video track rendered on the server; `client`, no video
 * at all, but a timed stream of the face's state on the topic `visage.face` (see faceStream.ts)
 * that the viewer's browser draws from, in step with the audio it plays.
 */
export const SESSION_MODES = ['video', 'client'] as const;
export const sessionModeSchema = z.enum(SESSION_MODES).meta({
  description:
    "`video`: the avatar publishes a video track. `client`: no video; the face is a timed stream on the text-stream topic `visage.face` for a renderer in the viewer's browser.",
});
export type SessionMode = z.infer<typeof sessionModeSchema>;
export type SessionStatus = z.infer<typeof sessionStatusSchema>;

export const END_REASONS = [
  'deleted',
  'idle_timeout',
  'max_duration',
  'room_closed',
  'agent_left',
  'error',
  'shutdown',
  'key_revoked',
] as const;
export const endReasonSchema = z.enum(END_REASONS);
export type EndReason = z.infer<typeof endReasonSchema>;

export const sessionSchema = z
  .object({
    session_id: idSchema(ID_PREFIXES.session),
    status: sessionStatusSchema,
    avatar_id: z.string(),
    voice_id: z.string(),
    mode: sessionModeSchema,
    transport: z.literal('livekit'),
    livekit_url: z.string(),
    room_name: z.string(),
    agent_identity: z.string(),
    publish_on_behalf: z.string().nullable(),
    idle_timeout_seconds: z.number().int(),
    max_duration_seconds: z.number().int(),
    created_at: timestamp,
    updated_at: timestamp,
    ended_at: timestamp.nullable(),
    end_reason: endReasonSchema.nullable(),
    atlas_url: z.string().optional().meta({
      description:
        "`client` mode: where a browser fetches the avatar's atlas (`GET /v1/avatars/{id}/atlas`), absolute and signed, valid at least a day; no API key needed. In the answers of create and get.",
    }),
  })
  .meta({ id: 'Session' });

export const createdSessionSchema = sessionSchema
  .extend({
    participant_token: z.string().optional().meta({
      description:
        'A secret: appears only in this response. Absent when the caller brought its own LiveKit (`livekit`): the caller mints its room tokens.',
    }),
    participant_token_expires_at: timestamp.optional(),
  })
  .meta({ id: 'CreatedSession' });

export const utteranceAcceptedSchema = z
  .object({
    utterance_id: idSchema(ID_PREFIXES.utterance),
    session_id: idSchema(ID_PREFIXES.session),
    status: z.literal('queued'),
  })
  .meta({ id: 'UtteranceAccepted' });

export const interruptResultSchema = z
  .object({
    session_id: idSchema(ID_PREFIXES.session),
    interrupted: z.boolean(),
    dropped_utterances: z.number().int(),
  })
  .meta({ id: 'InterruptResult' });

export const participantTokenSchema = z
  .object({ participant_token: z.string(), expires_at: timestamp })
  .meta({ id: 'ParticipantToken' });

export const healthSchema = z
  .object({ status: z.literal('ok'), version: z.string(), media: z.string() })
  .meta({ id: 'Health' });

export const readinessSchema = z
  .object({ status: z.literal('ready'), version: z.string(), media: z.string() })
  .meta({ id: 'Readiness' });

export function listSchema<T extends z.ZodType>(item: T) {
  return z.object({ data: z.array(item), has_more: z.boolean() });
}

export type FileObject = z.infer<typeof fileSchema>;
export type Voice = z.infer<typeof voiceSchema>;
export type Avatar = z.infer<typeof avatarSchema>;
export type Session = z.infer<typeof sessionSchema>;
export type CreatedSession = z.infer<typeof createdSessionSchema>;
export type UtteranceAccepted = z.infer<typeof utteranceAcceptedSchema>;
export type InterruptResult = z.infer<typeof interruptResultSchema>;
export type ParticipantToken = z.infer<typeof participantTokenSchema>;
export type Health = z.infer<typeof healthSchema>;
export type Readiness = z.infer<typeof readinessSchema>;
export interface List<T> {
  data: T[];
  has_more: boolean;
}
