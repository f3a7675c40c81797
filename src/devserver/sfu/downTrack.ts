// SPDX-License-Identifier: GPL-3.0-or-later
import {
  MediaStream,
  MediaStreamTrack,
  RtcpPayloadSpecificFeedback,
  type RTCRtpTransceiver,
  type RtpPacket,
} from 'werift';
import type { PublishedTrack } from '../rtc/publishedTrack.js';

// PSFB feedback message types (RFC 4585 / 5104).
const FMT_PLI = 1;
const FMT_FIR = 4;

/**
 * One published track as sent to one subscriber: a sendonly transceiver on the subscriber's peer
 * connection. The werift sender rewrites SSRC, payload type and sequence/timestamp offsets and
 * answers the subscriber's NACKs from its packet cache.
 */
export class DownTrack {
  readonly track: MediaStreamTrack;
  readonly transceiver: RTCRtpTransceiver;
  private readonly published: PublishedTrack;
  private awaitingKeyframe: boolean;
  private closed = false;
  private readonly unsubscribeRtcp: () => void;
  packetsSent = 0;

  constructor(published: PublishedTrack, transceiver: RTCRtpTransceiver, track: MediaStreamTrack) {
    this.published = published;
    this.transceiver = transceiver;
    this.track = track;
    this.awaitingKeyframe = published.isVideo;
    this.unsubscribeRtcp = transceiver.sender.onRtcp.subscribe((packet) => {
      if (
        packet instanceof RtcpPayloadSpecificFeedback &&
        (packet.feedback.count === FMT_PLI || packet.feedback.count === FMT_FIR)
      ) {
        published.requestKeyframe();
      }
    }).unSubscribe;
  }

  /**
   * Builds the track and stream ids the SDKs require: the msid stream id is
   * `<participant sid>|<track sid>` and the track id is the track sid.
   */
  static streamFor(publisherSid: string, trackSid: string): MediaStream {
    return new MediaStream({ id: `${publisherSid}|${trackSid}` });
  }

  static localTrack(published: PublishedTrack): MediaStreamTrack {
    return new MediaStreamTrack({ kind: published.isVideo ? 'video' : 'audio', id: published.sid });
  }

  /**
   * Sends one packet. `sourceSwitched` marks the first packet of another simulcast layer, whose
   * sequence numbers and timestamps are unrelated to the previous layer's.
   */
  write(rtp: RtpPacket, sourceSwitched = false): void {
    if (this.closed) return;
    const sender = this.transceiver.sender;
    if (sender.transport?.state !== 'connected') {
      // Nothing can be sent yet; a video subscriber will need a key frame once it can.
      this.awaitingKeyframe = this.published.isVideo;
      return;
    }
    if (this.awaitingKeyframe) {
      if (!this.published.isKeyframeStart(rtp.payload)) {
        // A key frame that went by moments ago is sent from the track's copy: the publisher
        // would not make another this soon.
        const recent = this.published.packetsSinceRecentKeyframe();
        if (recent.length === 0) {
          this.published.requestKeyframe();
          return;
        }
        this.awaitingKeyframe = false;
        for (const packet of recent) this.send(packet, false);
        return;
      }
      this.awaitingKeyframe = false;
    }
    this.send(rtp, sourceSwitched);
  }

  private send(rtp: RtpPacket, sourceSwitched: boolean): void {
    const sender = this.transceiver.sender;
    // The sender mutates the header in place and caches the packet for NACKs, and the
    // publisher's extension ids mean nothing on this connection: send a stripped copy.
    const copy = rtp.clone();
    copy.header.extensions = [];
    copy.header.extension = false;
    if (sourceSwitched && this.packetsSent > 0) {
      // Continue this subscriber's numbering: the next sequence number, and a timestamp one
      // frame (at 30 fps, 90 kHz) after the last one sent.
      sender.replaceRTP({
        sequenceNumber: (copy.header.sequenceNumber - 1) & 0xffff,
        timestamp: (copy.header.timestamp - 3000) >>> 0,
      });
    }
    this.track.writeRtp(copy);
    this.packetsSent++;
  }

  close(): void {
    this.closed = true;
    this.unsubscribeRtcp();
  }
}
