// SPDX-License-Identifier: GPL-3.0-or-later
import { ParticipantInfo_Kind, ParticipantPermission, TrackSource } from '@livekit/protocol';
import type { VideoGrant } from 'livekit-server-sdk';

// LiveKit's defaults: publish, subscribe and data are allowed unless the grant says otherwise;
// updating one's own metadata is not.
export function permissionFromGrant(video: VideoGrant | undefined): ParticipantPermission {
  return new ParticipantPermission({
    canSubscribe: video?.canSubscribe ?? true,
    canPublish: video?.canPublish ?? true,
    canPublishData: video?.canPublishData ?? true,
    canPublishSources: (video?.canPublishSources ?? []).map(trackSourceFromGrant),
    hidden: video?.hidden ?? false,
    recorder: video?.recorder ?? false,
    canUpdateMetadata: video?.canUpdateOwnMetadata ?? false,
    agent: video?.agent ?? false,
    canSubscribeMetrics: video?.canSubscribeMetrics ?? false,
  });
}

/** Tokens spell sources in lower snake case ('microphone'), or occasionally as enum numbers. */
export function trackSourceFromGrant(source: unknown): TrackSource {
  if (typeof source === 'number') return source as TrackSource;
  switch (String(source).toLowerCase()) {
    case 'camera':
      return TrackSource.CAMERA;
    case 'microphone':
      return TrackSource.MICROPHONE;
    case 'screen_share':
      return TrackSource.SCREEN_SHARE;
    case 'screen_share_audio':
      return TrackSource.SCREEN_SHARE_AUDIO;
    default:
      return TrackSource.UNKNOWN;
  }
}

export function canPublishSource(permission: ParticipantPermission, source: TrackSource): boolean {
  if (!permission.canPublish) return false;
  if (permission.canPublishSources.length === 0) return true;
  return permission.canPublishSources.includes(source);
}

export function participantKindFromToken(kind: string | undefined): ParticipantInfo_Kind {
  switch (kind) {
    case 'agent':
      return ParticipantInfo_Kind.AGENT;
    case 'ingress':
      return ParticipantInfo_Kind.INGRESS;
    case 'egress':
      return ParticipantInfo_Kind.EGRESS;
    case 'sip':
      return ParticipantInfo_Kind.SIP;
    default:
      return ParticipantInfo_Kind.STANDARD;
  }
}
