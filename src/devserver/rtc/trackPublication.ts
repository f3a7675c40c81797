// SPDX-License-Identifier: GPL-3.0-or-later
import {
  TrackInfo,
  TrackPublishedResponse,
  TrackType,
  type AddTrackRequest,
} from '@livekit/protocol';
import type { MediaStreamTrack, RTCRtpTransceiver } from 'werift';
import { canPublishSource } from '../service/grants.js';
import { newId } from './ids.js';
import type { Participant } from './participant.js';
import { PublishedTrack } from './publishedTrack.js';

/**
 * Step one of publishing: the SDK announces a track (AddTrackRequest) and waits for
 * TrackPublished before it adds the transceiver. Returns undefined when the participant may not
 * publish that source (LiveKit ignores the request; the SDK's publish times out).
 */
export function announceTrack(
  participant: Participant,
  request: AddTrackRequest,
): TrackPublishedResponse | undefined {
  if (!canPublishSource(participant.permission, request.source)) {
    participant.log.warn({ source: request.source }, 'no permission to publish track');
    return undefined;
  }
  let info = participant.pendingTracks.get(request.cid);
  if (!info) {
    info = new TrackInfo({
      sid: request.sid || newId('TR_'),
      type: request.type,
      name: request.name,
      muted: request.muted,
      width: request.width,
      height: request.height,
      simulcast: false,
      disableDtx: request.disableDtx,
      source: request.source,
      layers: request.layers,
      // What the SDK says it will publish; the publisher's negotiated codec settles it (below).
      mimeType: request.type === TrackType.VIDEO ? announcedVideoMime(request) : 'audio/opus',
      stereo: request.stereo,
      disableRed: true,
      encryption: request.encryption,
      stream: request.stream,
      audioFeatures: request.audioFeatures,
    });
    participant.pendingTracks.set(request.cid, info);
  }
  // With the offer that should follow, this tells a lost AddTrackRequest from a lost offer.
  participant.log.debug(
    { cid: request.cid, track: info.sid, source: request.source },
    'track announced',
  );
  return new TrackPublishedResponse({ cid: request.cid, track: info });
}

/**
 * Step two: media for an announced track arrived on the publisher connection. The offer's msid
 * track id is the cid; tracks from clients that use another id are matched by kind.
 */
export function trackFromMedia(
  participant: Participant,
  track: MediaStreamTrack,
  transceiver: RTCRtpTransceiver,
  trackId: string | undefined,
): PublishedTrack | undefined {
  const type = track.kind === 'video' ? TrackType.VIDEO : TrackType.AUDIO;
  let cid = trackId !== undefined && participant.pendingTracks.has(trackId) ? trackId : undefined;
  cid ??= [...participant.pendingTracks].find(([, info]) => info.type === type)?.[0];
  const info = cid === undefined ? undefined : participant.pendingTracks.get(cid);
  if (cid === undefined || !info) {
    participant.log.warn({ trackId, kind: track.kind }, 'media without AddTrackRequest ignored');
    return undefined;
  }
  participant.pendingTracks.delete(cid);
  info.mid = transceiver.mid ?? '';
  // The publisher sends in the first codec of the answer (werift keeps the offer's order).
  const negotiated = transceiver.codecs[0]?.mimeType;
  if (negotiated) info.mimeType = negotiated;
  const published = new PublishedTrack(info, cid);
  // Simulcast: werift reports the m-section once, with one track per layer on the receiver.
  const layers = transceiver.receiver.tracks.length > 0 ? transceiver.receiver.tracks : [track];
  published.attachSources(layers, transceiver.receiver);
  return published;
}

/** The video codec an AddTrackRequest names (`simulcastCodecs`), as a MIME type; VP8 if none. */
function announcedVideoMime(request: AddTrackRequest): string {
  const codec = request.simulcastCodecs.find((c) => c.codec !== '')?.codec.toLowerCase();
  return codec === 'h264' ? 'video/H264' : 'video/VP8';
}
