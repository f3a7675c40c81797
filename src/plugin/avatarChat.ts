import { type RemoteParticipant, type Room, RoomEvent } from '@livekit/rtc-node';

/** Topic on which the avatar reports what it is saying. */
export const AVATAR_CHAT_TOPIC = 'lk.chat';

/**
 * One `lk.chat` message of the avatar: interims carry the text heard so far of the utterance,
 * the final one the whole utterance, or only the heard part when it was interrupted.
 */
export interface AvatarChatMessage {
  text: string;
  final: boolean;
  /** The `/speak` answer's utterance id; absent from senders that predate it. */
  utteranceId?: string;
}

const decoder = new TextDecoder();

/** Parses a `lk.chat` payload; undefined when it is not one. */
export function parseAvatarChat(payload: Uint8Array): AvatarChatMessage | undefined {
  let body: unknown;
  try {
    body = JSON.parse(decoder.decode(payload));
  } catch {
    return undefined;
  }
  if (typeof body !== 'object' || body === null) return undefined;
  const { text, final, utterance_id: utteranceId } = body as Record<string, unknown>;
  if (typeof text !== 'string' || typeof final !== 'boolean') return undefined;
  return typeof utteranceId === 'string' ? { text, final, utteranceId } : { text, final };
}

/**
 * Calls `onMessage` for each `lk.chat` data packet the avatar participant sends into the room;
 * packets from anyone else are ignored. Returns the unsubscribe function.
 */
export function subscribeAvatarChat(
  room: Room,
  avatarIdentity: string,
  onMessage: (message: AvatarChatMessage) => void,
): () => void {
  const listener = (
    payload: Uint8Array,
    participant?: RemoteParticipant,
    _kind?: unknown,
    topic?: string,
  ) => {
    if (topic !== AVATAR_CHAT_TOPIC || participant?.identity !== avatarIdentity) return;
    const message = parseAvatarChat(payload);
    if (message) onMessage(message);
  };
  room.on(RoomEvent.DataReceived, listener);
  return () => {
    room.off(RoomEvent.DataReceived, listener);
  };
}
