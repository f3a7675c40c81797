// SPDX-License-Identifier: GPL-3.0-or-later
// How LiveKit decides who speaks: the publisher's RTP carries each packet's level in dBov
// (RFC 6464, 0 = loudest, 127 = silence); a participant speaks when enough recent packets are
// louder than a threshold.
const ACTIVE_LEVEL_DBOV = 35;
const MIN_ACTIVE_FRACTION = 0.4;
const WINDOW_MS = 500;

export const AUDIO_LEVEL_EXTENSION_URI = 'urn:ietf:params:rtp-hdrext:ssrc-audio-level';

/** The speaking level of one audio track over the last half second. */
export class AudioLevelMeter {
  private samples: { at: number; dbov: number }[] = [];

  add(dbov: number, now = Date.now()): void {
    this.samples.push({ at: now, dbov });
    this.prune(now);
  }

  /** 0 when not speaking, else the mean linear level (0..1] of the loud packets. */
  level(now = Date.now()): number {
    this.prune(now);
    if (this.samples.length === 0) return 0;
    const loud = this.samples.filter((s) => s.dbov <= ACTIVE_LEVEL_DBOV);
    if (loud.length / this.samples.length < MIN_ACTIVE_FRACTION) return 0;
    const linear = loud.reduce((sum, s) => sum + 10 ** (-s.dbov / 20), 0) / loud.length;
    return Math.min(1, linear);
  }

  private prune(now: number): void {
    let drop = 0;
    while (drop < this.samples.length && now - this.samples[drop]!.at > WINDOW_MS) drop++;
    if (drop > 0) this.samples.splice(0, drop);
  }
}
