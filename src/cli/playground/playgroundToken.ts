// SPDX-License-Identifier: GPL-3.0-or-later
import { randomBytes } from 'node:crypto';
// The SDK's own protocol classes: it pins a @livekit/protocol of its own.
import { AccessToken, RoomAgentDispatch, RoomConfiguration } from 'livekit-server-sdk';

/** The embedded LiveKit server the playground's rooms are on, and its key pair. */
export interface PlaygroundLiveKit {
  url: string;
  apiKey: string;
  apiSecret: string;
}

/**
 * How long a playground token admits its holder to the room: enough to open the page and press
 * the button, short enough that a token copied out of the browser is soon worthless.
 */
export const PLAYGROUND_TOKEN_TTL_SECONDS = 10 * 60;

/**
 * How the page asks the agent to show its avatar: `video` (drawn on the server) or `client`
 * (drawn in the browser from the `visage.face` stream). It goes to the agent as its job's
 * dispatch metadata, `{"face":"client"}`, the one channel LiveKit gives a room's creator to the
 * agent it dispatches; the agent passes it to the plugin's `face` option (the example worker does).
 */
export type PlaygroundFace = 'video' | 'client';

export interface PlaygroundToken {
  livekit_url: string;
  token: string;
  room: string;
  identity: string;
  expires_in: number;
}

/**
 * A participant token for a fresh room of the embedded LiveKit: joining it creates the room,
 * and the server dispatches the registered agent workers into it (those registered without an
 * agent name, or the one `agentName` names, through the token's room configuration, as LiveKit's
 * explicit dispatch does). The browser gets only this token, never the key or the secret.
 */
export async function playgroundToken(
  livekit: PlaygroundLiveKit,
  agentName: string | undefined,
  face: PlaygroundFace = 'video',
): Promise<PlaygroundToken> {
  const room = `playground-${randomBytes(6).toString('hex')}`;
  const identity = `developer-${randomBytes(4).toString('hex')}`;
  const token = new AccessToken(livekit.apiKey, livekit.apiSecret, {
    identity,
    name: 'Developer',
    ttl: PLAYGROUND_TOKEN_TTL_SECONDS,
  });
  token.addGrant({
    room,
    roomJoin: true,
    canSubscribe: true,
    canPublish: true,
    canPublishData: true,
  });
  // Without a name or a face to ask for, the room's default dispatch (the workers registered
  // without a name) is the one LiveKit makes anyway; an explicit one carries the metadata.
  if (agentName || face !== 'video') {
    token.roomConfig = new RoomConfiguration({
      agents: [
        new RoomAgentDispatch({
          agentName: agentName ?? '',
          metadata: face === 'video' ? '' : JSON.stringify({ face }),
        }),
      ],
    });
  }
  return {
    livekit_url: livekit.url,
    token: await token.toJwt(),
    room,
    identity,
    expires_in: PLAYGROUND_TOKEN_TTL_SECONDS,
  };
}
