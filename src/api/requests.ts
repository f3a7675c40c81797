import { z } from 'zod';
import { ID_PREFIXES, idSchema } from './ids.js';
import { sessionStatusSchema } from './resources.js';

/**
 * Request bodies and queries. Objects are strict: an unknown field is an error
 * (400 unknown_field), never silently ignored.
 */

export const createVoiceRequestSchema = z
  .strictObject({
    name: z.string().trim().min(1).max(100),
    file_id: idSchema(ID_PREFIXES.file).optional(),
    url: z.string().max(2048).optional(),
  })
  .meta({ id: 'CreateVoiceRequest', description: 'Exactly one of file_id or url.' });

/** LiveKit room names and identities: printable, no slashes or spaces at the ends. */
const livekitName = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9_.:@=+-]+$/, 'letters, digits and _ . : @ = + - only');

export const createSessionRequestSchema = z
  .strictObject({
    avatar_id: z.string().min(1).max(64),
    mode: z.literal('video'),
    voice_id: z.string().min(1).max(64).optional(),
    transport: z.literal('livekit').optional(),
    room_name: livekitName.optional(),
    publish_on_behalf: livekitName.optional(),
    idle_timeout_seconds: z.number().int().min(5).max(86_400).optional(),
  })
  .meta({ id: 'CreateSessionRequest' });

export const speakRequestSchema = z
  .strictObject({ text: z.string().min(1) })
  .meta({ id: 'SpeakRequest' });

export const waitingStateRequestSchema = z
  .strictObject({ waiting: z.boolean() })
  .meta({ id: 'WaitingStateRequest' });

export const interruptRequestSchema = z.strictObject({}).meta({ id: 'InterruptRequest' });

export const audioFileRequestSchema = z
  .strictObject({ file_id: idSchema(ID_PREFIXES.file) })
  .meta({ id: 'AudioFileRequest' });

export const audioQuerySchema = z.strictObject({ text: z.string().min(1).optional() });

const limitParam = z.coerce.number().int().min(1).max(100).default(20);

export const listQuerySchema = z.strictObject({
  limit: limitParam,
  after: z.string().min(1).max(64).optional(),
});

export const listSessionsQuerySchema = listQuerySchema.extend({
  status: sessionStatusSchema.optional(),
});

export type CreateVoiceRequest = z.infer<typeof createVoiceRequestSchema>;
export type CreateSessionRequest = z.infer<typeof createSessionRequestSchema>;
export type SpeakRequest = z.infer<typeof speakRequestSchema>;
export type WaitingStateRequest = z.infer<typeof waitingStateRequestSchema>;
/** Query parameters as a caller writes them (all optional; the server applies defaults). */
export type ListQuery = Partial<z.output<typeof listQuerySchema>>;
export type ListSessionsQuery = Partial<z.output<typeof listSessionsQuerySchema>>;
