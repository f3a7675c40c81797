// SPDX-License-Identifier: GPL-3.0-or-later
import { RTCPeerConnection, type MediaStreamTrack, type RTCRtpTransceiver } from 'werift';
import type { Logger } from 'pino';
import { keepEarlyDtls } from './earlyDtls.js';
import { peerConnectionConfig, type IceSettings } from './peerConfig.js';
import {
  acceptInactiveSections,
  answerOpusDtx,
  parseOfferedMedia,
  type OfferedMedia,
} from './sdp.js';

export interface PublisherPeerEvents {
  /** A local ICE candidate, JSON as the SDKs expect it in TrickleRequest.candidateInit. */
  onCandidate(candidateInit: string): void;
  /** Remote media appeared; `trackId` is the msid track id (the SDK's cid). */
  onTrack(
    track: MediaStreamTrack,
    transceiver: RTCRtpTransceiver,
    trackId: string | undefined,
  ): void;
  /** An m-section that carried a track is gone, rejected or no longer sending. */
  onMediaEnded(mid: string): void;
  onData(label: string, data: Buffer): void;
  onStateChange(state: string): void;
  /**
   * Whether the track an offered section carries (by msid track id) may use Opus DTX; undefined
   * for a track the server does not know.
   */
  dtxFor(trackId: string | undefined): boolean | undefined;
}

/** The participant's upstream connection: the SDK offers, the server answers. */
export class PublisherPeer {
  readonly pc: RTCPeerConnection;
  private readonly events: PublisherPeerEvents;
  private readonly log: Logger;
  // Browsers renegotiate and werift fires `track` again for the same transceiver: each mid is
  // announced once.
  private readonly announcedMids = new Set<string>();
  private offered: OfferedMedia[] = [];
  private queue: Promise<unknown> = Promise.resolve();

  constructor(ice: IceSettings, events: PublisherPeerEvents, log: Logger) {
    this.events = events;
    this.log = log;
    this.pc = new RTCPeerConnection(peerConnectionConfig(ice, 'publisher'));
    this.pc.onIceCandidate.subscribe((candidate) => {
      if (candidate) events.onCandidate(JSON.stringify(candidate.toJSON()));
    });
    this.pc.connectionStateChange.subscribe((state) => events.onStateChange(state));
    this.pc.ontrack = ({ track, transceiver }) => {
      const mid = transceiver.mid ?? '';
      if (this.announcedMids.has(mid)) {
        this.log.debug({ mid, kind: track.kind }, 'publisher: track event for an announced mid');
        return;
      }
      this.announcedMids.add(mid);
      const offered = this.offered.find((m) => m.mid === mid);
      events.onTrack(track, transceiver, offered?.trackId ?? transceiver.receiver.remoteTrackId);
    };
    this.pc.onDataChannel.subscribe((channel) => {
      channel.onMessage.subscribe((message) => {
        if (typeof message !== 'string') events.onData(channel.label, message);
      });
    });
  }

  /** Applies an offer and returns the answer SDP. Offers are handled strictly in order. */
  handleOffer(sdp: string): Promise<string> {
    const run = async (): Promise<string> => {
      const media = parseOfferedMedia(sdp);
      this.offered = media;
      for (const mid of this.announcedMids) {
        const section = media.find((m) => m.mid === mid);
        if (!section || section.rejected || !/send/.test(section.direction)) {
          this.announcedMids.delete(mid);
          this.events.onMediaEnded(mid);
        }
      }
      // werift recycles an "inactive" transceiver (any kind) for a section a later offer adds,
      // dropping the section it stood for: "Transceiver with mid=N not found", and the new
      // track never announced. The SDKs' pre-created recvonly sections are inactive here, so
      // every transceiver this side has keeps its section (as if it had been used to send).
      for (const t of this.pc.getTransceivers()) t.usedForSender = true;
      await this.pc.setRemoteDescription({ type: 'offer', sdp });
      // Answer as the DTLS server (a=setup:passive). As the client (werift's default for an
      // answer), werift waits a fixed 100 ms before its first ClientHello; as the server, the
      // SDK's ClientHello starts the handshake as soon as ICE is up (see earlyDtls.ts).
      for (const dtls of this.pc.dtlsTransports) if (dtls.role === 'auto') dtls.role = 'server';
      const answer = await this.pc.createAnswer().catch((err: unknown) => {
        // What werift could not pair, for the log: the offer's sections and its transceivers.
        this.log.warn(
          {
            offered: media.map((m) => `${m.mid}:${m.kind}:${m.direction}${m.rejected ? ':0' : ''}`),
            transceivers: this.pc
              .getTransceivers()
              .map((t) => `${t.mid}:${t.kind}:${t.direction}/${t.currentDirection ?? '-'}`),
          },
          'publisher: no answer to the offer',
        );
        throw err;
      });
      const local = await this.pc.setLocalDescription(answer);
      keepEarlyDtls(this.pc);
      this.log.debug(
        {
          offered: media.map((m) => `${m.mid}:${m.kind}:${m.direction}${m.rejected ? ':0' : ''}`),
          transceivers: this.pc
            .getTransceivers()
            .map((t) => `${t.mid}:${t.kind}:${t.direction}/${t.currentDirection ?? '-'}`),
        },
        'publisher: answered an offer',
      );
      return answerOpusDtx(acceptInactiveSections(local.toSdp().sdp, sdp), sdp, this.events.dtxFor);
    };
    const result = this.queue.then(run);
    this.queue = result.catch(() => undefined);
    return result;
  }

  async addCandidate(candidateInit: string): Promise<void> {
    try {
      await this.pc.addIceCandidate(JSON.parse(candidateInit));
    } catch (err) {
      this.log.debug({ err }, 'publisher: ignored remote candidate');
    }
  }

  async close(): Promise<void> {
    await this.pc.close().catch(() => undefined);
  }
}
