// SPDX-License-Identifier: GPL-3.0-or-later
import type { RtpPacket } from 'werift';

/**
 * libwebrtc encoders ignore a key frame request that comes within this long of their last key
 * frame (rtc-node's publishers answered a request 40 ms after a key frame only 360 ms later, at
 * the server's next request).
 */
const PUBLISHER_KEYFRAME_INTERVAL_MS = 300;
/** A bound for publishers of very high bitrates: 300 ms of the avatars' 1.2 Mbps is ~40 packets. */
const MAX_PACKETS = 1_000;

/**
 * The forwarded video from its last key frame on, while that key frame is recent. A subscriber
 * whose connection comes up just after a key frame went by (an rtc-node subscriber asks for one
 * before the server's side of its connection is up) starts from here at once, instead of waiting
 * until the publisher will make another: up to 300 ms without a picture, most of a 430 ms join.
 * The replayed frames are at most that old; after such a join the bench's lip-sync offset (video
 * minus audio) stayed at 20 ms.
 */
export class RecentKeyframe {
  private packets: RtpPacket[] = [];
  private startedAt = 0;

  /** Records a forwarded packet; `keyframeStart`: it begins a key frame. */
  add(rtp: RtpPacket, keyframeStart: boolean, now: number): void {
    if (keyframeStart) {
      this.packets = [rtp];
      this.startedAt = now;
      return;
    }
    if (this.packets.length === 0) return;
    if (this.packets.length >= MAX_PACKETS || !this.isRecent(now)) {
      this.packets = [];
      return;
    }
    this.packets.push(rtp);
  }

  /** The packets from a recent key frame up to the last one added; empty when there is none. */
  replay(now: number): readonly RtpPacket[] {
    return this.isRecent(now) ? this.packets : [];
  }

  clear(): void {
    this.packets = [];
  }

  private isRecent(now: number): boolean {
    return now - this.startedAt < PUBLISHER_KEYFRAME_INTERVAL_MS;
  }
}
