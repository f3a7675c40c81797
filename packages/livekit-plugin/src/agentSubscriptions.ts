// SPDX-License-Identifier: Apache-2.0
import {
  RoomEvent,
  TrackKind,
  type RemoteParticipant,
  type RemoteTrackPublication,
} from '@livekit/rtc-node';
import type { Room } from './agentsRtcTypes.js';

/**
 * Keeps the agent unsubscribed from its avatar's tracks; returns the function that stops.
 *
 * An agent connected as the LiveKit Agents examples connect it (`ctx.connect()`: every track of
 * every participant) subscribes to the avatar's video and voice like any other participant's.
 * It never uses them (the voice is its own reply; agents' room input skips participants that
 * publish on its behalf), but a subscriber is a viewer to LiveKit: the avatar's video stays on
 * (dynacast pauses a video only while nobody subscribes to it), so an avatar whose user has not
 * joined yet, or has left, keeps rendering and encoding at full rate, and the agent decodes it.
 * Unsubscribed, the avatar costs (almost) nothing until a user watches it (issue 47), and the
 * agent saves the decoding. `waitForTrackPublication` and the avatar's `lk.chat` and RPCs do not
 * need a subscription.
 */
export function stayUnsubscribedFromAvatar(
  room: Room,
  avatarIdentity: string,
  onUnsubscribed: (kind: 'video' | 'audio') => void = () => undefined,
): () => void {
  const leave = (publication: RemoteTrackPublication) => {
    if (!publication.subscribed) return;
    publication.setSubscribed(false);
    onUnsubscribed(publication.kind === TrackKind.KIND_VIDEO ? 'video' : 'audio');
  };
  const onSubscribed = (
    _track: unknown,
    publication: RemoteTrackPublication,
    participant: RemoteParticipant,
  ) => {
    if (participant.identity === avatarIdentity) leave(publication);
  };
  room.on(RoomEvent.TrackSubscribed, onSubscribed);
  const avatar = room.remoteParticipants.get(avatarIdentity);
  for (const publication of avatar?.trackPublications.values() ?? []) leave(publication);
  return () => {
    room.off(RoomEvent.TrackSubscribed, onSubscribed);
  };
}
