// SPDX-License-Identifier: GPL-3.0-or-later
import { RoomServiceClient } from 'livekit-server-sdk';
import type { LiveKitCredentials, MediaSessionSpec } from '../mediaCore.js';

/** Bound on each stage of a session's start and on each LiveKit server request, by default. */
export const DEFAULT_STAGE_TIMEOUT_MS = 10_000;

/** The server API of a LiveKit, each request bounded by `timeoutMs` (whole seconds, at least 1). */
export function roomServiceFor(livekit: LiveKitCredentials, timeoutMs: number): RoomServiceClient {
  return new RoomServiceClient(livekit.url, livekit.apiKey, livekit.apiSecret, {
    requestTimeout: Math.max(1, Math.ceil(timeoutMs / 1000)),
  });
}

/** What `removeAvatar` could do. */
export type AvatarRemoval = 'room_deleted' | 'participant_removed' | 'no_credentials';

/**
 * Takes a session's avatar out of its room from outside its connection: for when the process
 * that held the connection died and the avatar could not leave. Without it, viewers see a frozen
 * avatar until the LiveKit server notices the lost connection (15 s and more).
 *
 * A room Visage made for the session alone is deleted, as a session's normal end does; in the
 * caller's room only the avatar is removed. With a caller's token alone (no credentials) nothing
 * can be done and the server's own timeout applies. Rejects when the server refuses or times out
 * (an avatar that had not joined yet is "not found").
 */
export async function removeAvatar(
  spec: Pick<MediaSessionSpec, 'livekit' | 'roomName' | 'agentIdentity' | 'ownsRoom'>,
  timeoutMs: number,
): Promise<AvatarRemoval> {
  const { livekit } = spec;
  if ('token' in livekit) return 'no_credentials';
  const rooms = roomServiceFor(livekit, timeoutMs);
  if (spec.ownsRoom) {
    await rooms.deleteRoom(spec.roomName);
    return 'room_deleted';
  }
  await rooms.removeParticipant(spec.roomName, spec.agentIdentity);
  return 'participant_removed';
}
