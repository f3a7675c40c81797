// SPDX-License-Identifier: GPL-3.0-or-later
import { AccessToken, TrackSource } from 'livekit-server-sdk';

/**
 * The avatar's own token: kind `agent` (frontends find agents by kind), publish-only (camera and
 * microphone, data), and `lk.publish_on_behalf` naming the agent it speaks for, so frontends
 * treat its tracks as the agent's.
 */
export async function mintAvatarToken(
  livekit: { apiKey: string; apiSecret: string },
  room: string,
  identity: string,
  publishOnBehalf: string | null,
): Promise<string> {
  const at = new AccessToken(livekit.apiKey, livekit.apiSecret, {
    identity,
    name: 'Visage avatar',
    ttl: 24 * 3600,
  });
  at.kind = 'agent';
  if (publishOnBehalf) at.attributes = { 'lk.publish_on_behalf': publishOnBehalf };
  at.addGrant({
    roomJoin: true,
    room,
    canPublish: true,
    canPublishSources: [TrackSource.CAMERA, TrackSource.MICROPHONE],
    canPublishData: true,
    canSubscribe: false,
  });
  return at.toJwt();
}
