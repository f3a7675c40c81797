// SPDX-License-Identifier: Apache-2.0
import { z } from 'zod';
import { ID_PREFIXES } from './idFormat.js';
import { idSchema } from './ids.js';

/**
 * The avatar's progress reports in the room: reliable data packets on topic `lk.chat`, UTF-8
 * JSON. An interim (`text: ""`) when an utterance starts playing, interims with the text heard so
 * far, and one final with the whole text, or only the heard part when it was interrupted.
 */
export const CHAT_TOPIC = 'lk.chat';

export const chatMessageSchema = z
  .object({
    text: z.string(),
    final: z.boolean(),
    /** The utterance the message reports on (the speak/audio answer's id). */
    utterance_id: idSchema(ID_PREFIXES.utterance).optional(),
  })
  .meta({ id: 'ChatMessage', description: `The avatar's ${CHAT_TOPIC} data messages.` });

export type ChatMessage = z.infer<typeof chatMessageSchema>;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function encodeChatMessage(message: ChatMessage): Uint8Array {
  return encoder.encode(JSON.stringify(message));
}

/** Parses an `lk.chat` payload; undefined when it is not one. */
export function parseChatMessage(payload: Uint8Array): ChatMessage | undefined {
  let body: unknown;
  try {
    body = JSON.parse(decoder.decode(payload));
  } catch {
    return undefined;
  }
  const parsed = chatMessageSchema.safeParse(body);
  return parsed.success ? parsed.data : undefined;
}
