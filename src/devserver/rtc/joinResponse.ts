// SPDX-License-Identifier: GPL-3.0-or-later
import {
  ClientConfigSetting,
  ClientConfiguration,
  Codec,
  JoinResponse,
  ServerInfo,
  ServerInfo_Edition,
  type Room as RoomInfo,
} from '@livekit/protocol';
import type { Participant } from './participant.js';

export const SERVER_VERSION = '1.9.0';
/** Signal protocol version the server speaks (what LiveKit 1.9 announces). */
export const SERVER_PROTOCOL = 16;
const PING_INTERVAL_S = 5;
const PING_TIMEOUT_S = 15;

/** What the forwarding path carries; browsers pick a publish codec from this list. */
export const enabledCodecs = (): Codec[] => [
  new Codec({ mime: 'video/VP8' }),
  new Codec({ mime: 'audio/opus' }),
];

/**
 * Settings for the SDKs. Browsers are told not to resume (livekit-client would restart ICE
 * on both connections, which werift does not do reliably as the offerer): they reconnect in
 * full. The Rust SDKs ignore the setting and resume (see RtcEndpoint).
 */
export function clientConfiguration(): ClientConfiguration {
  return new ClientConfiguration({ resumeConnection: ClientConfigSetting.DISABLED });
}

/**
 * What a participant joining `room` is told: the room, itself, the others it may see, and how
 * this server works (version, codecs, pings, fast publish).
 */
export function joinResponse(
  room: RoomInfo,
  participant: Participant,
  others: readonly Participant[],
  nodeId: string,
): JoinResponse {
  return new JoinResponse({
    room,
    participant: participant.toInfo(),
    otherParticipants: others.map((p) => p.toInfo()),
    serverVersion: SERVER_VERSION,
    // As LiveKit: the publisher connection is primary for one that may not subscribe.
    subscriberPrimary: participant.permission.canSubscribe,
    // LiveKit's fast publish: the SDK negotiates its publisher connection at once and sends
    // each later offer without its 150 ms debounce. LiveKit gives it to every publisher;
    // here only agents get it (an avatar's tracks reach the room ~200 ms sooner). The SDKs
    // first ask for /rtc/v1, which this server does not speak, and after that fallback their
    // connect() waits for the publisher connection too: given to every publisher, one
    // subscriber's join took 280-330 ms against 180, sixteen at once 6-10 s against 1.7 s.
    fastPublish: participant.isAgent && participant.permission.canPublish,
    enabledPublishCodecs: enabledCodecs(),
    pingInterval: PING_INTERVAL_S,
    pingTimeout: PING_TIMEOUT_S,
    clientConfiguration: clientConfiguration(),
    serverInfo: new ServerInfo({
      edition: ServerInfo_Edition.Standard,
      version: SERVER_VERSION,
      protocol: SERVER_PROTOCOL,
      nodeId,
      region: 'local',
    }),
  });
}
