// SPDX-License-Identifier: GPL-3.0-or-later
import { AccessToken, TrackSource } from 'livekit-server-sdk';
import { randomBase62 } from '@visage-avatar/client/api';
import type { LiveKitCredentials } from '../../media/mediaCore.js';

/**
 * The client's token for one session's room: join that room only, subscribe, publish microphone
 * audio and data. It cannot touch the HTTP API (it is a LiveKit JWT, not an `sk_` key).
 */
export async function mintParticipantToken(
  livekit: LiveKitCredentials,
  roomName: string,
  ttlSeconds: number,
): Promise<{ token: string; expiresAt: Date }> {
  const at = new AccessToken(livekit.apiKey, livekit.apiSecret, {
    identity: `user_${randomBase62(12)}`,
    ttl: ttlSeconds,
  });
  at.addGrant({
    roomJoin: true,
    room: roomName,
    canSubscribe: true,
    canPublish: true,
    canPublishData: true,
    canPublishSources: [TrackSource.MICROPHONE],
  });
  return { token: await at.toJwt(), expiresAt: new Date(Date.now() + ttlSeconds * 1000) };
}
