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

/**
 * Both signals in bins of one video frame (40 ms): the audio's RMS amplitude in each bin, the
 * mouth opening of the frame shown then (held until the next one).
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
  const mouth = new Float64Array(n);
  const frames = client.video
    .map((f) => ({ atMs: videoAt(f), mouth: f.mouth }))
    .filter((f) => f.atMs < toMs)
    .sort((a, b) => a.atMs - b.atMs);
  for (let f = 0; f < frames.length; f++) {
    const start = Math.max(0, Math.floor((frames[f]!.atMs - fromMs) / binMs));
    const end = f + 1 < frames.length ? Math.floor((frames[f + 1]!.atMs - fromMs) / binMs) : n;
    for (let i = start; i < Math.min(n, end); i++) mouth[i] = frames[f]!.mouth;
  }
  let best: LipSync = { correlation: -Infinity, lagMs: 0 };
  const maxLag = Math.round(maxLagMs / binMs);
  for (let lag = -maxLag; lag <= maxLag; lag++) {
    const a: number[] = [];
    const v: number[] = [];
    for (let i = 0; i < n; i++) {
      const j = i + lag;
      if (j < 0 || j >= n) continue;
      a.push(audio[i]!);
      v.push(mouth[j]!);
    }
    const r = pearson(a, v);
    if (r > best.correlation) best = { correlation: r, lagMs: lag * binMs };
  }
  return best;
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
