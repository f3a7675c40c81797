// SPDX-License-Identifier: Apache-2.0
import { z } from 'zod';
import { ID_PREFIXES, isIdOf, type IdPrefix } from './idFormat.js';
import { AVATAR_ID, FILE_ID, VOICE_ID, idRefSchema } from './ids.js';
import { sessionModeSchema, sessionStatusSchema } from './resources.js';
import { lineText, proseText } from './text.js';

/**
 * Request bodies and queries. Objects are strict: an unknown field is an error
 * (400 unknown_field), never silently ignored.
 */

export const createVoiceRequestSchema = z
  .strictObject({
    name: lineText().trim().min(1).max(100),
    file_id: idRefSchema(FILE_ID).optional(),
    url: lineText().max(2048).optional(),
  })
  .meta({ id: 'CreateVoiceRequest', description: 'Exactly one of file_id or url.' });

const avatarName = lineText().trim().min(1).max(100);

/** POST /v1/avatars as JSON: the portrait is fetched from a public URL. */
export const createAvatarRequestSchema = z
  .strictObject({
    name: avatarName,
    image_url: lineText().max(2048),
    voice_id: idRefSchema(VOICE_ID).optional(),
  })
  .meta({ id: 'CreateAvatarRequest' });

/** POST /v1/avatars as multipart/form-data: these text fields beside the part `image`. */
export const createAvatarFormSchema = z
  .strictObject({
    name: avatarName,
    voice_id: idRefSchema(VOICE_ID).optional(),
  })
  .meta({ id: 'CreateAvatarForm' });

/** LiveKit room names and identities: printable, no slashes or spaces at the ends. */
const livekitName = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9_.:@=+-]+$/, 'letters, digits and _ . : @ = + - only');

/**
 * A LiveKit the caller brings: the avatar joins the room of `token` on `url` with that token
 * (minted by the caller with its own LiveKit keys). Room and identity come from the token.
 */
export const callerLiveKitSchema = z
  .strictObject({
    url: z
      .string()
      .max(2048)
      .regex(/^wss?:\/\//i, 'a ws:// or wss:// URL')
      .meta({ description: "The LiveKit server's URL (ws:// or wss://), e.g. LIVEKIT_URL." }),
    token: z.string().min(1).max(8192).meta({
      description:
        "The avatar's access token for one room: roomJoin, canPublish (camera and microphone), canPublishData, not expired; lk.publish_on_behalf as an attribute when it speaks for an agent.",
    }),
  })
  .meta({ id: 'CallerLiveKit' });

export const createSessionRequestSchema = z
  .strictObject({
    avatar_id: idRefSchema(AVATAR_ID),
    mode: sessionModeSchema,
    voice_id: idRefSchema(VOICE_ID).optional(),
    transport: z.literal('livekit').optional(),
    room_name: livekitName.optional(),
    publish_on_behalf: livekitName.optional(),
    agent_identity: livekitName.optional().meta({
      description:
        "The avatar's participant identity in the room (default `avatar_` + random). Not with `livekit`: the token names it.",
    }),
    idle_timeout_seconds: z.number().int().min(5).max(86_400).optional(),
    livekit: callerLiveKitSchema.optional(),
  })
  .meta({ id: 'CreateSessionRequest' });

export const speakRequestSchema = z
  .strictObject({ text: proseText().min(1) })
  .meta({ id: 'SpeakRequest' });

export const waitingStateRequestSchema = z
  .strictObject({ waiting: z.boolean() })
  .meta({ id: 'WaitingStateRequest' });

export const interruptRequestSchema = z.strictObject({}).meta({ id: 'InterruptRequest' });

export const audioFileRequestSchema = z
  .strictObject({ file_id: idRefSchema(FILE_ID) })
  .meta({ id: 'AudioFileRequest' });

export const audioQuerySchema = z.strictObject({ text: proseText().min(1).optional() });

const limitParam = z.coerce.number().int().min(1).max(100).default(20);

/**
 * `after` is an id of the listed kind: a malformed cursor is a 400 `validation_failed`, like a
 * well-formed cursor that is not in the list, and never reaches the database.
 */
const cursorParam = (...prefixes: IdPrefix[]) =>
  lineText()
    .refine((s) => isIdOf(prefixes, s), `must be an id starting with ${prefixes.join(' or ')}`)
    .optional();

export const listQuerySchema = z.strictObject({
  limit: limitParam,
  after: cursorParam(...(Object.values(ID_PREFIXES) as IdPrefix[])),
});

export const listVoicesQuerySchema = listQuerySchema.extend({
  after: cursorParam(ID_PREFIXES.clonedVoice, ID_PREFIXES.stockVoice),
});

export const listAvatarsQuerySchema = listQuerySchema.extend({
  after: cursorParam(ID_PREFIXES.avatar),
});

export const listSessionsQuerySchema = listQuerySchema.extend({
  after: cursorParam(ID_PREFIXES.session),
  status: sessionStatusSchema.optional(),
});

/**
 * A signed atlas URL's query (`GET /v1/avatars/{id}/atlas`): the expiry, Unix seconds, and the
 * HMAC-SHA256 signature, base64url without padding (43 characters). Any other query, or one that
 * does not parse, is refused like a wrong signature (403 `invalid_signature`).
 */
export const avatarAtlasQuerySchema = z.strictObject({
  expires: z
    .string()
    .regex(/^[1-9][0-9]{0,11}$/)
    .transform(Number),
  sig: z.string().regex(/^[A-Za-z0-9_-]{43}$/),
});

export type CreateVoiceRequest = z.infer<typeof createVoiceRequestSchema>;
export type CreateAvatarRequest = z.infer<typeof createAvatarRequestSchema>;
export type CreateAvatarForm = z.infer<typeof createAvatarFormSchema>;
export type CreateSessionRequest = z.infer<typeof createSessionRequestSchema>;
export type CallerLiveKit = z.infer<typeof callerLiveKitSchema>;
export type SpeakRequest = z.infer<typeof speakRequestSchema>;
export type WaitingStateRequest = z.infer<typeof waitingStateRequestSchema>;
/** Query parameters as a caller writes them (all optional; the server applies defaults). */
export type ListQuery = Partial<z.output<typeof listQuerySchema>>;
export type ListSessionsQuery = Partial<z.output<typeof listSessionsQuerySchema>>;
