// SPDX-License-Identifier: Apache-2.0
import { AccessToken, TrackSource } from 'livekit-server-sdk';

/** The token lives long enough to wait out a capacity retry; LiveKit refreshes it once joined. */
const AVATAR_TOKEN_TTL_SECONDS = 10 * 60;

/**
 * The avatar's own token for the agent's room, minted with the agent's LiveKit credentials (as
 * the agents-js avatar plugins do): kind `agent`, publish camera, microphone and data, and
 * `lk.publish_on_behalf` naming the agent, so frontends treat the avatar's tracks as the agent's.
 */
export async function mintAvatarJoinToken(o: {
  apiKey: string;
  apiSecret: string;
  roomName: string;
  identity: string;
  publishOnBehalf: string;
}): Promise<string> {
  const at = new AccessToken(o.apiKey, o.apiSecret, {
    identity: o.identity,
    name: 'Visage avatar',
    ttl: AVATAR_TOKEN_TTL_SECONDS,
  });
  at.kind = 'agent';
  at.attributes = { 'lk.publish_on_behalf': o.publishOnBehalf };
  at.addGrant({
    roomJoin: true,
    room: o.roomName,
    canPublish: true,
    canPublishSources: [TrackSource.CAMERA, TrackSource.MICROPHONE],
    canPublishData: true,
    canSubscribe: false,
  });
  return at.toJwt();
}
