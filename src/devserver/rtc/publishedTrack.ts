// SPDX-License-Identifier: GPL-3.0-or-later
import { TrackInfo, TrackType, type SubscribedQualityUpdate } from '@livekit/protocol';
import type { MediaStreamTrack, RTCRtpReceiver, RtpPacket } from 'werift';
import { AUDIO_LEVEL_EXTENSION_URI, AudioLevelMeter } from '../sfu/audioLevel.js';
import type { DownTrack } from '../sfu/downTrack.js';
import { Dynacast, type DynacastTimings } from '../sfu/dynacast.js';
import { keyframeStartTest } from '../sfu/forwardedCodecs.js';
import { RecentKeyframe } from '../sfu/recentKeyframe.js';

// A subscriber that lost a frame asks again quickly; the publisher's encoder should not be made
// to produce key frames faster than this.
const KEYFRAME_REQUEST_INTERVAL_MS = 300;
// A simulcast layer that sent nothing for this long is considered paused by the encoder.
const LAYER_STALE_MS = 1_000;
// The SDKs name simulcast layers by quality.
const RID_RANK: Record<string, number> = { q: 0, h: 1, f: 2 };

/** One incoming RTP stream of a track: the only one, or one simulcast layer. */
interface Layer {
  track: MediaStreamTrack;
  rank: number;
  ssrc?: number;
  lastPacketAt: number;
  unsubscribe: () => void;
}

/**
 * A track a participant publishes: its announced TrackInfo, the incoming RTP once the publisher's
 * media arrives, and the subscribers it is forwarded to.
 *
 * Simulcast (several layers of one video) is forwarded as a single stream: the best layer that
 * is flowing, switching layers only at a key frame so every subscriber can decode across the
 * switch. There is no per-subscriber layer choice (no adaptive stream); dynacast is all or
 * nothing: every layer while anyone subscribes, none while nobody does (dynacast.ts).
 */
export class PublishedTrack {
  readonly info: TrackInfo;
  readonly cid: string;
  private receiver?: RTCRtpReceiver;
  private layers: Layer[] = [];
  private active?: Layer;
  private readonly downTracks = new Map<string, DownTrack>();
  private lastKeyframeRequest = 0;
  private readonly recentKeyframe = new RecentKeyframe();
  private dynacast: Dynacast | undefined;
  /** How loud the track is (audio only), for active speaker detection. */
  readonly audioLevel = new AudioLevelMeter();
  packetsReceived = 0;
  /** Whether anyone ever subscribed (the publisher is told the first time only). */
  everSubscribed = false;

  /** Whether an RTP payload starts a key frame, in the codec the track is published in. */
  readonly isKeyframeStart: (payload: Buffer) => boolean;

  constructor(info: TrackInfo, cid: string) {
    this.info = info;
    this.cid = cid;
    this.isKeyframeStart = keyframeStartTest(info.mimeType) ?? (() => false);
  }

  get sid(): string {
    return this.info.sid;
  }

  get isVideo(): boolean {
    return this.info.type === TrackType.VIDEO;
  }

  /** The rid of the layer being forwarded ('' without simulcast), for inspection. */
  get activeLayer(): string | undefined {
    return this.active ? (this.active.track.rid ?? '') : undefined;
  }

  /** Starts forwarding the publisher's RTP: one track, or one per simulcast layer. */
  attachSources(tracks: MediaStreamTrack[], receiver: RTCRtpReceiver): void {
    for (const layer of this.layers) layer.unsubscribe();
    this.receiver = receiver;
    this.active = undefined;
    this.layers = tracks.map((track, index) => {
      const layer: Layer = {
        track,
        rank: track.rid !== undefined ? (RID_RANK[track.rid] ?? index) : index,
        lastPacketAt: 0,
        unsubscribe: () => undefined,
      };
      layer.unsubscribe = track.onReceiveRtp.subscribe((rtp, extensions) => {
        const level = extensions?.[AUDIO_LEVEL_EXTENSION_URI] as { level?: number } | undefined;
        if (typeof level?.level === 'number') this.audioLevel.add(level.level);
        this.onPacket(layer, rtp);
      }).unSubscribe;
      return layer;
    });
  }

  /**
   * Tells the publisher which layers anyone subscribes to, from now on (video only): see
   * dynacast.ts.
   */
  startDynacast(timings: DynacastTimings, send: (update: SubscribedQualityUpdate) => void): void {
    if (!this.isVideo || this.dynacast) return;
    this.dynacast = new Dynacast(this.sid, this.info.mimeType, timings, send);
    this.dynacast.subscribersChanged(this.downTracks.size);
  }

  /** Whether the publisher was last told to send its video (undefined: not dynacast). */
  get dynacastSending(): boolean | undefined {
    return this.dynacast?.sending;
  }

  addDownTrack(subscriberSid: string, downTrack: DownTrack): void {
    this.downTracks.set(subscriberSid, downTrack);
    this.dynacast?.subscribersChanged(this.downTracks.size);
  }

  removeDownTrack(subscriberSid: string): DownTrack | undefined {
    const downTrack = this.downTracks.get(subscriberSid);
    this.downTracks.delete(subscriberSid);
    if (downTrack) this.dynacast?.subscribersChanged(this.downTracks.size);
    return downTrack;
  }

  get subscriberSids(): string[] {
    return [...this.downTracks.keys()];
  }

  /**
   * The forwarded packets from the last key frame on, up to the one being forwarded now, while
   * that key frame is recent (see RecentKeyframe); empty otherwise.
   */
  packetsSinceRecentKeyframe(): readonly RtpPacket[] {
    return this.recentKeyframe.replay(Date.now());
  }

  /** Asks the publisher for a key frame (PLI) on the forwarded layer, rate limited. */
  requestKeyframe(layer = this.active ?? this.layers[0]): void {
    if (!this.isVideo || !this.receiver || layer?.ssrc === undefined) return;
    const now = Date.now();
    if (now - this.lastKeyframeRequest < KEYFRAME_REQUEST_INTERVAL_MS) return;
    this.lastKeyframeRequest = now;
    void this.receiver.sendRtcpPLI(layer.ssrc).catch(() => undefined);
  }

  close(): void {
    this.dynacast?.close();
    for (const layer of this.layers) layer.unsubscribe();
    this.layers = [];
    this.active = undefined;
    this.recentKeyframe.clear();
    for (const downTrack of this.downTracks.values()) downTrack.close();
    this.downTracks.clear();
  }

  private onPacket(layer: Layer, rtp: RtpPacket): void {
    const now = Date.now();
    layer.lastPacketAt = now;
    layer.ssrc = rtp.header.ssrc;
    this.packetsReceived++;
    if (this.layers.length === 1) {
      this.active = layer;
      this.forward(rtp, false);
      return;
    }
    const best = this.bestLayer(now);
    if (layer === this.active) {
      this.forward(rtp, false);
      if (best !== layer) this.requestKeyframe(best);
      return;
    }
    if (layer !== best) return;
    const activeStale = !this.active || now - this.active.lastPacketAt > LAYER_STALE_MS;
    if (this.isKeyframeStart(rtp.payload) || (activeStale && !this.isVideo)) {
      const switching = this.active !== undefined;
      this.active = layer;
      this.forward(rtp, switching);
    } else if (activeStale) {
      // Nothing is being forwarded: get the new layer's key frame quickly.
      this.requestKeyframe(layer);
    }
  }

  private bestLayer(now: number): Layer | undefined {
    let best: Layer | undefined;
    for (const layer of this.layers) {
      if (now - layer.lastPacketAt > LAYER_STALE_MS) continue;
      if (!best || layer.rank > best.rank) best = layer;
    }
    return best;
  }

  private forward(rtp: RtpPacket, layerSwitched: boolean): void {
    if (this.isVideo) this.recentKeyframe.add(rtp, this.isKeyframeStart(rtp.payload), Date.now());
    for (const downTrack of this.downTracks.values()) downTrack.write(rtp, layerSwitched);
  }
}
