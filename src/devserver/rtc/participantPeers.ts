// SPDX-License-Identifier: GPL-3.0-or-later
import {
  AudioTrackFeature,
  SessionDescription,
  SignalTarget,
  TrickleRequest,
} from '@livekit/protocol';
import type { IceSettings } from './peerConfig.js';
import type { Participant } from './participant.js';
import type { PublishedTrack } from './publishedTrack.js';
import { PublisherPeer } from './publisherPeer.js';
import { SubscriberPeer } from './subscriberPeer.js';
import { trackFromMedia } from './trackPublication.js';

/** What a participant's peer connections tell its room. */
export interface ParticipantPeerEvents {
  /** A track the participant publishes arrived on its publisher connection. */
  published(track: PublishedTrack): void;
  /** The media of a published track ended (its m-section gone, rejected or no longer sending). */
  mediaEnded(trackSid: string): void;
  /** A data packet on its publisher connection (`_reliable`, or `_lossy`: not reliable). */
  data(data: Buffer, reliable: boolean): void;
  /** Its primary connection is up: the subscriber one, or the publisher one if it may not subscribe. */
  primaryConnected(): void;
}

/**
 * Gives a joining participant its two peer connections (LiveKit's publisher and subscriber),
 * whose ICE candidates and offers travel on its signal connection.
 */
export function attachPeers(
  participant: Participant,
  ice: IceSettings,
  events: ParticipantPeerEvents,
): void {
  const trickle = (target: SignalTarget) => (candidateInit: string) =>
    participant.send({ case: 'trickle', value: new TrickleRequest({ candidateInit, target }) });
  participant.subscriber = new SubscriberPeer(
    ice,
    {
      onCandidate: trickle(SignalTarget.SUBSCRIBER),
      onOffer: (sdp, id) =>
        participant.send({
          case: 'offer',
          value: new SessionDescription({ type: 'offer', sdp, id }),
        }),
      onStateChange: (state) => {
        participant.log.debug({ state }, 'subscriber connection');
        if (state === 'connected' && participant.permission.canSubscribe) events.primaryConnected();
      },
    },
    participant.log,
  );
  participant.publisher = new PublisherPeer(
    ice,
    {
      onCandidate: trickle(SignalTarget.PUBLISHER),
      onTrack: (track, transceiver, trackId) => {
        const published = trackFromMedia(participant, track, transceiver, trackId);
        if (published) events.published(published);
      },
      onMediaEnded: (mid) => {
        const track = [...participant.tracks.values()].find((t) => t.info.mid === mid);
        if (track) events.mediaEnded(track.sid);
      },
      onData: (label, data) => events.data(data, label !== '_lossy'),
      dtxFor: (trackId) => {
        if (trackId === undefined) return undefined;
        const info =
          participant.pendingTracks.get(trackId) ??
          [...participant.tracks.values()].find((t) => t.cid === trackId)?.info;
        if (!info) return undefined;
        return !info.disableDtx && !info.audioFeatures.includes(AudioTrackFeature.TF_NO_DTX);
      },
      onStateChange: (state) => {
        participant.log.debug({ state }, 'publisher connection');
        if (state === 'connected' && !participant.permission.canSubscribe) {
          events.primaryConnected();
        }
      },
    },
    participant.log,
  );
}
