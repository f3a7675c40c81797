// SPDX-License-Identifier: GPL-3.0-or-later
import {
  SubscribedCodec,
  SubscribedQuality,
  SubscribedQualityUpdate,
  VideoQuality,
} from '@livekit/protocol';

export interface DynacastTimings {
  /**
   * How long a video track nobody subscribed to since it was published keeps its layers on
   * before they are all turned off (LiveKit: 10 s, `initialQualityUpdateWait`).
   */
  initialWaitMs: number;
  /** How long after the last subscriber left the layers go off (LiveKit: 5 s, dynacast_pause_delay). */
  pauseDelayMs: number;
}

export const LIVEKIT_DYNACAST_TIMINGS: DynacastTimings = {
  initialWaitMs: 10_000,
  pauseDelayMs: 5_000,
};

// Every quality is named in each update: a publisher of one layer has it addressed as LOW
// (rust-sdks' set_publishing_layers), a simulcast publisher gets all of its layers on or off.
const QUALITIES = [VideoQuality.LOW, VideoQuality.MEDIUM, VideoQuality.HIGH];

/**
 * How LiveKit spells a codec in `subscribedCodecs`: the MIME type as pion writes it
 * (protocol's codecs/mime `MimeType.String()`: `video/H264`, `video/VP8`). rust-sdks compares it
 * without case to its own codec name and falls back to the first entry.
 */
const LIVEKIT_MIME = ['video/H264', 'video/H265', 'video/VP8', 'video/VP9', 'video/AV1'];
export function liveKitMimeSpelling(mimeType: string): string {
  return LIVEKIT_MIME.find((m) => m.toLowerCase() === mimeType.toLowerCase()) ?? mimeType;
}

/**
 * What LiveKit's dynacast tells a publisher of a video track: which layers anyone subscribes
 * to (`SubscribedQualityUpdate`). This server forwards one layer to everyone, so the answer is
 * all or nothing: on at once when a subscriber arrives, off `pauseDelayMs` after the last one
 * left, or `initialWaitMs` after publishing when nobody ever came. A publisher that joined with
 * dynacast then stops encoding while nobody watches (and an app that can tell, rendering).
 */
export class Dynacast {
  private enabled = true;
  private subscribers = 0;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly trackSid: string,
    private readonly codec: string,
    private readonly timings: DynacastTimings,
    private readonly send: (update: SubscribedQualityUpdate) => void,
  ) {
    // Publishers start with every layer on; nobody subscribing for a while turns them off.
    this.schedule(this.timings.initialWaitMs);
  }

  /** Whether the publisher was last told to send (for inspection and tests). */
  get sending(): boolean {
    return this.enabled;
  }

  subscribersChanged(count: number): void {
    if (this.closed) return;
    const before = this.subscribers;
    this.subscribers = count;
    if (count > 0) {
      // Upgrades go at once; a pending "off" is cancelled.
      clearTimeout(this.timer);
      this.timer = undefined;
      if (!this.enabled) this.update(true);
    } else if (before > 0) {
      this.schedule(this.timings.pauseDelayMs);
    }
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
  }

  private schedule(delayMs: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (!this.closed && this.subscribers === 0 && this.enabled) this.update(false);
    }, delayMs);
    this.timer.unref();
  }

  private update(enabled: boolean): void {
    this.enabled = enabled;
    const qualities = QUALITIES.map((quality) => new SubscribedQuality({ quality, enabled }));
    this.send(
      new SubscribedQualityUpdate({
        trackSid: this.trackSid,
        subscribedQualities: qualities,
        subscribedCodecs: [
          new SubscribedCodec({ codec: liveKitMimeSpelling(this.codec), qualities }),
        ],
      }),
    );
  }
}
