// SPDX-License-Identifier: GPL-3.0-or-later
import { resample } from '../audio/resample.js';

/**
 * YIN fundamental-frequency tracker (de Cheveigné & Kawahara 2002), run at 8 kHz: F0 of speech
 * is below 500 Hz, and the lower rate makes the O(window x lag) difference function four times
 * cheaper than at 16 kHz, which is what keeps a 30 s clip well under a quarter of a second.
 */
export interface PitchTrack {
  /** Frame hop in milliseconds. */
  hopMs: number;
  /** F0 per frame in Hz; 0 where the frame is unvoiced or silent. */
  f0: Float32Array;
  /** Frame RMS (of the 8 kHz signal), for gating and envelope use. */
  rms: Float32Array;
}

export interface PitchTrackerOptions {
  minHz?: number;
  maxHz?: number;
  /** YIN absolute threshold on the cumulative-mean-normalised difference. */
  threshold?: number;
  /**
   * Estimate F0 on every n-th frame only (others repeat the last estimate; RMS stays per frame).
   * Long clips need far fewer frames for stable statistics; 1 = every frame.
   */
  decimate?: number;
}

export const PITCH_ANALYSIS_RATE = 8000;
const HOP_MS = 10;
const WINDOW_MS = 30;

export function trackPitch(
  mono: Float32Array,
  sampleRate: number,
  opts: PitchTrackerOptions = {},
): PitchTrack {
  const minHz = opts.minHz ?? 60;
  const maxHz = opts.maxHz ?? 500;
  const threshold = opts.threshold ?? 0.15;
  const decimate = Math.max(1, Math.floor(opts.decimate ?? 1));
  const rate = PITCH_ANALYSIS_RATE;
  const x = sampleRate === rate ? mono : resample(mono, sampleRate, rate);
  const hop = (rate * HOP_MS) / 1000;
  const window = (rate * WINDOW_MS) / 1000;
  const tauMin = Math.floor(rate / maxHz);
  const tauMax = Math.ceil(rate / minHz);
  const frames = Math.max(0, Math.floor((x.length - window - tauMax) / hop) + 1);
  const f0 = new Float32Array(frames);
  const rms = new Float32Array(frames);

  for (let f = 0; f < frames; f++) {
    const start = f * hop;
    let energy = 0;
    for (let j = 0; j < window; j++) energy += x[start + j]! * x[start + j]!;
    rms[f] = Math.sqrt(energy / window);
  }
  // Silence gate: 40 dB below the loud frames, so pauses and breaths are not analysed.
  const sorted = Float32Array.from(rms).sort();
  const loud = sorted[Math.floor(sorted.length * 0.95)] ?? 0;
  const gate = Math.max(loud * 0.01, 1e-5);

  const diff = new Float64Array(tauMax + 2);
  for (let f = 0; f < frames; f++) {
    if (rms[f]! < gate) continue;
    if (f % decimate !== 0) {
      f0[f] = f0[f - 1]!; // repeat the last estimate (0 after an unvoiced or silent frame)
      continue;
    }
    const start = f * hop;
    for (let tau = 1; tau <= tauMax + 1; tau++) {
      let d = 0;
      for (let j = 0; j < window; j++) {
        const delta = x[start + j]! - x[start + j + tau]!;
        d += delta * delta;
      }
      diff[tau] = d;
    }
    // Cumulative mean normalised difference, in place.
    let running = 0;
    let found = -1;
    for (let tau = 1; tau <= tauMax + 1; tau++) {
      running += diff[tau]!;
      diff[tau] = running > 0 ? (diff[tau]! * tau) / running : 1;
    }
    for (let tau = tauMin; tau <= tauMax; tau++) {
      if (diff[tau]! < threshold) {
        while (tau + 1 <= tauMax && diff[tau + 1]! < diff[tau]!) tau++;
        found = tau;
        break;
      }
    }
    if (found < 0) continue;
    // Parabolic interpolation around the minimum for sub-sample lag.
    const a = diff[found - 1]!;
    const b = diff[found]!;
    const c = diff[found + 1]!;
    const denom = a - 2 * b + c;
    const shift = denom > 0 ? (0.5 * (a - c)) / denom : 0;
    f0[f] = rate / (found + Math.max(-0.5, Math.min(0.5, shift)));
  }
  return { hopMs: HOP_MS, f0, rms };
}

export interface PitchStatistics {
  medianHz: number;
  p10Hz: number;
  p90Hz: number;
  /** p10-p90 spread in semitones. */
  spreadSemitones: number;
  /** Fraction of frames that are voiced. */
  voicedFraction: number;
  voicedFrames: number;
}

function quantile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return 0;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.min(sorted.length - 1, lo + 1);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

/**
 * Median, p10 and p90 of the voiced frames, after dropping octave errors (frames more than
 * about an octave away from the first-pass median: YIN's typical failure on creaky voice and
 * on the edges of voicing).
 */
export function pitchStatistics(track: PitchTrack): PitchStatistics {
  const voiced = Array.from(track.f0).filter((v) => v > 0);
  voiced.sort((a, b) => a - b);
  const roughMedian = quantile(voiced, 0.5);
  const kept = voiced.filter((v) => v > roughMedian * 0.55 && v < roughMedian * 1.8);
  const medianHz = quantile(kept, 0.5);
  const p10Hz = quantile(kept, 0.1);
  const p90Hz = quantile(kept, 0.9);
  return {
    medianHz,
    p10Hz,
    p90Hz,
    spreadSemitones: p10Hz > 0 ? 12 * Math.log2(p90Hz / p10Hz) : 0,
    voicedFraction: track.f0.length > 0 ? kept.length / track.f0.length : 0,
    voicedFrames: kept.length,
  };
}
