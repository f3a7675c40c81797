// SPDX-License-Identifier: Apache-2.0
import { type RemoteParticipant, type Room, RoomEvent } from '@livekit/rtc-node';
import { CHAT_TOPIC, parseChatMessage } from '@visage-avatar/client/api';

/** Topic on which the avatar reports what it is saying (the wire contract's `CHAT_TOPIC`). */
export const AVATAR_CHAT_TOPIC = CHAT_TOPIC;

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

/** Parses a `lk.chat` payload with the wire contract's parser; undefined when it is not one. */
export function parseAvatarChat(payload: Uint8Array): AvatarChatMessage | undefined {
  const message = parseChatMessage(payload);
  if (!message) return undefined;
  const { text, final, utterance_id: utteranceId } = message;
  return utteranceId === undefined ? { text, final } : { text, final, utteranceId };
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
