import { TrackInfo, TrackType } from '@livekit/protocol';
import type { MediaStreamTrack, RTCRtpReceiver, RtpPacket } from 'werift';
import type { DownTrack } from './downTrack.js';

// A subscriber that lost a frame asks again quickly; the publisher's encoder should not be made
// to produce key frames faster than this.
const KEYFRAME_REQUEST_INTERVAL_MS = 300;

/**
 * A track a participant publishes: its announced TrackInfo, the incoming RTP once the publisher's
 * media arrives, and the subscribers it is forwarded to.
 */
export class PublishedTrack {
  readonly info: TrackInfo;
  readonly cid: string;
  private source?: { track: MediaStreamTrack; receiver: RTCRtpReceiver; unsubscribe: () => void };
  private readonly downTracks = new Map<string, DownTrack>();
  private lastKeyframeRequest = 0;
  packetsReceived = 0;

  constructor(info: TrackInfo, cid: string) {
    this.info = info;
    this.cid = cid;
  }

  get sid(): string {
    return this.info.sid;
  }

  get isVideo(): boolean {
    return this.info.type === TrackType.VIDEO;
  }

  /** True once the publisher's RTP is flowing into the server. */
  get hasMedia(): boolean {
    return this.source !== undefined;
  }

  attachSource(track: MediaStreamTrack, receiver: RTCRtpReceiver): void {
    this.source?.unsubscribe();
    const { unSubscribe } = track.onReceiveRtp.subscribe((rtp) => this.forward(rtp));
    this.source = { track, receiver, unsubscribe: unSubscribe };
  }

  addDownTrack(subscriberSid: string, downTrack: DownTrack): void {
    this.downTracks.set(subscriberSid, downTrack);
  }

  removeDownTrack(subscriberSid: string): DownTrack | undefined {
    const downTrack = this.downTracks.get(subscriberSid);
    this.downTracks.delete(subscriberSid);
    return downTrack;
  }

  downTrackFor(subscriberSid: string): DownTrack | undefined {
    return this.downTracks.get(subscriberSid);
  }

  get subscriberSids(): string[] {
    return [...this.downTracks.keys()];
  }

  /** Asks the publisher for a key frame (PLI), rate limited across all subscribers. */
  requestKeyframe(): void {
    if (!this.isVideo || !this.source) return;
    const now = Date.now();
    if (now - this.lastKeyframeRequest < KEYFRAME_REQUEST_INTERVAL_MS) return;
    this.lastKeyframeRequest = now;
    const ssrc = this.source.track.ssrc;
    if (ssrc !== undefined) void this.source.receiver.sendRtcpPLI(ssrc).catch(() => undefined);
  }

  close(): void {
    this.source?.unsubscribe();
    this.source = undefined;
    for (const downTrack of this.downTracks.values()) downTrack.close();
    this.downTracks.clear();
  }

  private forward(rtp: RtpPacket): void {
    this.packetsReceived++;
    for (const downTrack of this.downTracks.values()) downTrack.write(rtp);
  }
}
