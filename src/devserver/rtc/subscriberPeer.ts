// SPDX-License-Identifier: GPL-3.0-or-later
import { RTCPeerConnection, type RTCDataChannel } from 'werift';
import type { Logger } from 'pino';
import { DownTrack } from '../sfu/downTrack.js';
import { keepEarlyDtls } from './earlyDtls.js';
import { subscriberCodec } from '../sfu/forwardedCodecs.js';
import { peerConnectionConfig, type IceSettings } from './peerConfig.js';
import type { PublishedTrack } from './publishedTrack.js';

// A DataPacket with no value (`kind: RELIABLE` written out: a zero-length message would be an
// empty SCTP message, which werift does not send correctly).
const EMPTY_DATA_PACKET = Buffer.from([0x08, 0x00]);

export interface SubscriberPeerEvents {
  onCandidate(candidateInit: string): void;
  onOffer(sdp: string, offerId: number): void;
  onStateChange(state: string): void;
}

/**
 * The participant's downstream connection: the server offers (data channels first, tracks as
 * they are subscribed), the SDK answers. One negotiation at a time; changes made meanwhile are
 * folded into the next offer.
 */
export class SubscriberPeer {
  readonly pc: RTCPeerConnection;
  private readonly events: SubscriberPeerEvents;
  private readonly log: Logger;
  private readonly reliable: RTCDataChannel;
  private readonly lossy: RTCDataChannel;
  private readonly pendingReliable: Buffer[] = [];
  private negotiating = false;
  private negotiateAgain = false;
  private offerId = 0;
  /** The offer waiting for its answer: sent again when a resumed signal connection lost it. */
  private pendingOffer?: { sdp: string; id: number };
  private closed = false;
  /**
   * No offer before start(): the tracks a joiner subscribes to at once go into its first offer.
   * Added while that offer was being made, they asked for a second one, the same again, whose
   * round trip held up the join's DTLS handshake.
   */
  private started = false;
  /** Down tracks added since the last completed negotiation: they need a key frame. */
  private fresh: DownTrack[] = [];
  private readonly published = new Map<DownTrack, PublishedTrack>();

  constructor(ice: IceSettings, events: SubscriberPeerEvents, log: Logger) {
    this.events = events;
    this.log = log;
    this.pc = new RTCPeerConnection(peerConnectionConfig(ice, 'subscriber'));
    this.pc.onIceCandidate.subscribe((candidate) => {
      if (candidate) events.onCandidate(JSON.stringify(candidate.toJSON()));
    });
    this.pc.connectionStateChange.subscribe((state) => events.onStateChange(state));
    // The SDKs receive data only on these two server-created channels.
    this.reliable = this.pc.createDataChannel('_reliable', { ordered: true });
    this.lossy = this.pc.createDataChannel('_lossy', { ordered: false, maxRetransmits: 0 });
    this.reliable.stateChanged.subscribe((state) => {
      if (state === 'open') {
        // Measured, not understood: on a fresh association from werift to libwebrtc, the
        // fourth DATA chunk (after the two channel opens and one message) is lost when it is
        // not sent right after the third, and is only retransmitted by the 1 s T3 timer; a
        // lossy message there arrives 1 s late, a reliable one holds up everything behind it
        // (an RPC took 1-2 s). Two empty packets sent at once use up those slots; SDKs ignore
        // packets without a value.
        for (let i = 0; i < 2; i++) this.reliable.send(EMPTY_DATA_PACKET);
        for (const data of this.pendingReliable.splice(0)) this.reliable.send(data);
      }
    });
  }

  start(): void {
    this.started = true;
    this.requestNegotiation();
  }

  /** Reliable data queues until the channel opens; lossy data is dropped like on the wire. */
  sendData(data: Buffer, reliable: boolean): void {
    if (this.closed) return;
    const channel = reliable ? this.reliable : this.lossy;
    if (channel.readyState === 'open') {
      try {
        channel.send(data);
      } catch (err) {
        this.log.debug({ err }, 'subscriber: data send failed');
      }
    } else if (reliable) {
      this.pendingReliable.push(data);
    }
  }

  addTrack(publisherSid: string, published: PublishedTrack): DownTrack {
    const local = DownTrack.localTrack(published);
    const transceiver = this.pc.addTransceiver(local, { direction: 'sendonly' });
    // Offered in the track's own codec only: the sender sends in the first negotiated codec, and
    // the packets are forwarded as the publisher encoded them.
    const codec = subscriberCodec(published.info.mimeType);
    if (codec) transceiver.codecs = [codec];
    // werift declares trackId readonly but uses it as the msid track id, which SDKs need to be
    // the track sid.
    (transceiver.sender as unknown as { trackId: string }).trackId = published.sid;
    transceiver.sender.setStreams([DownTrack.streamFor(publisherSid, published.sid)]);
    const downTrack = new DownTrack(published, transceiver, local);
    this.published.set(downTrack, published);
    this.fresh.push(downTrack);
    this.requestNegotiation();
    return downTrack;
  }

  removeTrack(downTrack: DownTrack): void {
    downTrack.close();
    this.published.delete(downTrack);
    if (this.closed) return;
    try {
      this.pc.removeTrack(downTrack.transceiver.sender);
    } catch (err) {
      this.log.debug({ err }, 'subscriber: removeTrack failed');
    }
    this.requestNegotiation();
  }

  resendPendingOffer(): void {
    if (this.pendingOffer) this.events.onOffer(this.pendingOffer.sdp, this.pendingOffer.id);
  }

  async handleAnswer(sdp: string): Promise<void> {
    if (this.closed) return;
    try {
      await this.pc.setRemoteDescription({ type: 'answer', sdp });
    } catch (err) {
      this.log.warn({ err }, 'subscriber: answer rejected');
    }
    this.negotiating = false;
    this.pendingOffer = undefined;
    for (const downTrack of this.fresh.splice(0)) this.published.get(downTrack)?.requestKeyframe();
    if (this.negotiateAgain) {
      this.negotiateAgain = false;
      void this.negotiate();
    }
  }

  async addCandidate(candidateInit: string): Promise<void> {
    try {
      await this.pc.addIceCandidate(JSON.parse(candidateInit));
    } catch (err) {
      this.log.debug({ err }, 'subscriber: ignored remote candidate');
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const downTrack of this.published.keys()) downTrack.close();
    this.published.clear();
    await this.pc.close().catch(() => undefined);
  }

  private requestNegotiation(): void {
    if (this.closed || !this.started) return;
    if (this.negotiating) {
      this.negotiateAgain = true;
      return;
    }
    void this.negotiate();
  }

  private async negotiate(): Promise<void> {
    if (this.closed) return;
    this.negotiating = true;
    try {
      const offer = await this.pc.createOffer();
      const local = await this.pc.setLocalDescription(offer);
      // The SDK answers a=setup:active, which makes this side the DTLS server: its ClientHello
      // can come before werift's own ICE nomination has been answered (see earlyDtls.ts).
      keepEarlyDtls(this.pc);
      this.offerId++;
      this.pendingOffer = { sdp: local.toSdp().sdp, id: this.offerId };
      this.events.onOffer(this.pendingOffer.sdp, this.pendingOffer.id);
    } catch (err) {
      this.negotiating = false;
      this.log.warn({ err }, 'subscriber: offer failed');
    }
  }
}
