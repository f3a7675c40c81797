// SPDX-License-Identifier: GPL-3.0-or-later
// How well the mouth a subscriber sees follows the sound it hears: the Pearson correlation of
// the mouth opening measured in received video frames with the received audio's envelope, at
// the video's own rate, at the lag that aligns them best.
import type { AvatarClient } from './avatarClient.js';

export interface LipSync {
  /** Pearson correlation at the best lag, -1..1. */
  correlation: number;
  /** The lag (ms) that aligns them best; > 0: the video comes later than the audio. */
  lagMs: number;
}

/**
 * On which clock the received media are laid out:
 * - `media` (default): each stream's own timeline, as a player presents it: audio by its sample
 *   count, video frames at the render time the receiver's jitter buffer gave them. Each timeline
 *   is placed on the test's clock at its least-delayed delivery. This is what a viewer sees and
 *   hears; the test process's own delivery delays (a busy machine hands it frames in bursts)
 *   are not part of it.
 * - `arrival`: when the test process got each frame and chunk.
 */
export type LipSyncClock = 'media' | 'arrival';

const LAG_STEP_MS = 10;

/**
 * Both signals in bins of one video frame (40 ms): the audio's RMS amplitude in each bin, the
 * mouth opening of the frame on screen in the middle of the bin, the video shifted by each lag
 * (10 ms steps) within `maxLagMs`.
 */
export function lipSync(
  client: AvatarClient,
  fromMs: number,
  toMs: number,
  { binMs = 40, maxLagMs = 240, clock = 'media' as LipSyncClock } = {},
): LipSync {
  const audioAt = placeOnTestClock(client.audio, (a) => a.playoutMs, clock);
  const videoAt = placeOnTestClock(client.video, (v) => v.renderMs, clock);
  const n = Math.floor((toMs - fromMs) / binMs);
  const energy = new Float64Array(n);
  const count = new Float64Array(n);
  for (const a of client.audio) {
    const i = Math.floor((audioAt(a) - fromMs) / binMs);
    if (i < 0 || i >= n) continue;
    for (const s of a.samples) energy[i]! += (s / 32768) ** 2;
    count[i]! += a.samples.length;
  }
  const audio = energy.map((e, i) => Math.sqrt(e / Math.max(1, count[i]!)));
  const frames = client.video
    .map((f) => ({ atMs: videoAt(f), mouth: f.mouth }))
    .sort((a, b) => a.atMs - b.atMs);
  /** The mouth of the frame on screen at `t` (the last one shown by then). */
  const mouthAt = (t: number): number | undefined => {
    let lo = 0;
    let hi = frames.length - 1;
    if (hi < 0 || frames[0]!.atMs > t) return undefined;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (frames[mid]!.atMs <= t) lo = mid;
      else hi = mid - 1;
    }
    return frames[lo]!.mouth;
  };
  // Lags in steps finer than a frame: at a whole frame's step, a true offset of half a frame
  // would cost every measurement the same misalignment.
  let best: LipSync = { correlation: -Infinity, lagMs: 0 };
  for (let lagMs = -maxLagMs; lagMs <= maxLagMs; lagMs += LAG_STEP_MS) {
    const a: number[] = [];
    const v: number[] = [];
    for (let i = 0; i < n; i++) {
      const m = mouthAt(fromMs + (i + 0.5) * binMs + lagMs);
      if (m === undefined) continue;
      a.push(audio[i]!);
      v.push(m);
    }
    const r = pearson(a, v);
    if (r > best.correlation) best = { correlation: r, lagMs };
  }
  return best;
}

/**
 * The same measure in consecutive windows (default 1.5 s), each at its own best lag: how well the
 * mouth follows the sound moment by moment, and how far the audio-to-video offset wandered over
 * the span (a whole-span figure pays for that wander with a single lag).
 */
export function lipSyncByWindow(
  client: AvatarClient,
  fromMs: number,
  toMs: number,
  windowMs = 1_500,
): { medianCorrelation: number; medianAbsLagMs: number; lagRangeMs: number; windows: LipSync[] } {
  const windows: LipSync[] = [];
  for (let t = fromMs; t + windowMs <= toMs; t += windowMs) {
    windows.push(lipSync(client, t, t + windowMs));
  }
  const lags = windows.map((w) => w.lagMs);
  return {
    medianCorrelation: median(windows.map((w) => w.correlation)),
    medianAbsLagMs: median(lags.map(Math.abs)),
    lagRangeMs: lags.length > 0 ? Math.max(...lags) - Math.min(...lags) : 0,
    windows,
  };
}

/** The middle value (the upper one of an even count); 0 for none. */
function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/**
 * Where each sample of a stream lies on the test's clock: its arrival, or its place on the
 * stream's own timeline shifted by the smallest delivery delay seen.
 */
function placeOnTestClock<T extends { atMs: number }>(
  samples: readonly T[],
  mediaMs: (s: T) => number,
  clock: LipSyncClock,
): (s: T) => number {
  if (clock === 'arrival') return (s) => s.atMs;
  let offset = Infinity;
  for (const s of samples) offset = Math.min(offset, s.atMs - mediaMs(s));
  return (s) => mediaMs(s) + offset;
}

function pearson(a: number[], b: number[]): number {
  const n = a.length;
  if (n < 3) return 0;
  const ma = a.reduce((s, x) => s + x, 0) / n;
  const mb = b.reduce((s, x) => s + x, 0) / n;
  let cov = 0;
  let va = 0;
  let vb = 0;
  for (let i = 0; i < n; i++) {
    cov += (a[i]! - ma) * (b[i]! - mb);
    va += (a[i]! - ma) ** 2;
    vb += (b[i]! - mb) ** 2;
  }
  return va > 0 && vb > 0 ? cov / Math.sqrt(va * vb) : 0;
}
