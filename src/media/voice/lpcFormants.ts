// SPDX-License-Identifier: GPL-3.0-or-later
import { resample } from '../audio/resample.js';

/**
 * Formant frequencies F1-F3 by linear prediction: per voiced frame, an order-12 LPC model at
 * 10 kHz (two poles per formant below 5 kHz plus spectral-shape slack), its roots found with the
 * Durand-Kerner iteration, and resonances kept when their bandwidth is under 400 Hz. The medians
 * over frames describe the speaker's vocal tract: all formants scale roughly inversely with its
 * length, which is what "formant scaling" reproduces in the synthesizer.
 */
export interface FormantEstimate {
  f1Hz: number;
  f2Hz: number;
  f3Hz: number;
  /** Frames that produced at least three formants. */
  frames: number;
}

export const FORMANT_ANALYSIS_RATE = 10000;
const ORDER = 12;
const FRAME_MS = 25;
const MAX_FRAMES = 400;
const MIN_FORMANT_HZ = 90;
const MAX_BANDWIDTH_HZ = 400;

/** Levinson-Durbin: LPC coefficients a[0..order] (a[0] = 1) from autocorrelation r. */
function levinson(r: Float64Array, order: number): Float64Array | undefined {
  const a = new Float64Array(order + 1);
  const tmp = new Float64Array(order + 1);
  a[0] = 1;
  let error = r[0]!;
  if (!(error > 0)) return undefined;
  for (let i = 1; i <= order; i++) {
    let acc = r[i]!;
    for (let j = 1; j < i; j++) acc += a[j]! * r[i - j]!;
    const k = -acc / error;
    tmp.set(a);
    for (let j = 1; j < i; j++) a[j] = tmp[j]! + k * tmp[i - j]!;
    a[i] = k;
    error *= 1 - k * k;
    if (!(error > 0)) return undefined;
  }
  return a;
}

/** Roots of z^n + a1 z^(n-1) + ... + an (monic), by Durand-Kerner. Returns [re, im] pairs. */
function polynomialRoots(a: Float64Array): Float64Array {
  const n = a.length - 1;
  const re = new Float64Array(n);
  const im = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    // Standard start: powers of a complex number that is neither real nor a root of unity.
    const angle = (2 * Math.PI * i) / n + 0.4;
    re[i] = 0.9 * Math.cos(angle);
    im[i] = 0.9 * Math.sin(angle);
  }
  for (let iter = 0; iter < 200; iter++) {
    let moved = 0;
    for (let i = 0; i < n; i++) {
      // p(z) by Horner.
      let pr = 1;
      let pi = 0;
      for (let k = 1; k <= n; k++) {
        const nr = pr * re[i]! - pi * im[i]! + a[k]!;
        pi = pr * im[i]! + pi * re[i]!;
        pr = nr;
      }
      // prod (z_i - z_j)
      let dr = 1;
      let di = 0;
      for (let j = 0; j < n; j++) {
        if (j === i) continue;
        const xr = re[i]! - re[j]!;
        const xi = im[i]! - im[j]!;
        const nr = dr * xr - di * xi;
        di = dr * xi + di * xr;
        dr = nr;
      }
      const den = dr * dr + di * di;
      if (den === 0) continue;
      const qr = (pr * dr + pi * di) / den;
      const qi = (pi * dr - pr * di) / den;
      re[i] = re[i]! - qr;
      im[i] = im[i]! - qi;
      moved = Math.max(moved, Math.abs(qr) + Math.abs(qi));
    }
    if (moved < 1e-9) break;
  }
  const out = new Float64Array(2 * n);
  for (let i = 0; i < n; i++) {
    out[2 * i] = re[i]!;
    out[2 * i + 1] = im[i]!;
  }
  return out;
}

function median(values: number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((x, y) => x - y);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * @param voicedTimesMs centres of voiced frames (from the pitch tracker); formants are only
 * meaningful on voiced speech. At most 400 evenly spread frames are analysed.
 */
export function estimateFormants(
  mono: Float32Array,
  sampleRate: number,
  voicedTimesMs: readonly number[],
): FormantEstimate {
  const rate = FORMANT_ANALYSIS_RATE;
  const x = sampleRate === rate ? mono : resample(mono, sampleRate, rate);
  const frameLength = Math.round((rate * FRAME_MS) / 1000);
  const window = Float64Array.from(
    { length: frameLength },
    (_, i) => 0.54 - 0.46 * Math.cos((2 * Math.PI * i) / (frameLength - 1)),
  );
  const step = Math.max(1, voicedTimesMs.length / MAX_FRAMES);
  const f1: number[] = [];
  const f2: number[] = [];
  const f3: number[] = [];
  const frame = new Float64Array(frameLength);
  const r = new Float64Array(ORDER + 1);

  for (let pick = 0; pick < voicedTimesMs.length; pick += step) {
    const centre = Math.round((voicedTimesMs[Math.floor(pick)]! * rate) / 1000);
    const start = centre - (frameLength >> 1);
    if (start < 1 || start + frameLength > x.length) continue;
    // Pre-emphasis flattens the glottal roll-off so the higher formants are modelled too.
    for (let i = 0; i < frameLength; i++) {
      frame[i] = (x[start + i]! - 0.97 * x[start + i - 1]!) * window[i]!;
    }
    for (let lag = 0; lag <= ORDER; lag++) {
      let acc = 0;
      for (let i = lag; i < frameLength; i++) acc += frame[i]! * frame[i - lag]!;
      r[lag] = acc;
    }
    r[0] = r[0]! * (1 + 1e-9); // tiny white-noise floor for numerical stability
    const a = levinson(r, ORDER);
    if (!a) continue;
    const roots = polynomialRoots(a);
    const formants: number[] = [];
    for (let i = 0; i < ORDER; i++) {
      const re = roots[2 * i]!;
      const im = roots[2 * i + 1]!;
      if (im <= 0) continue; // one of each conjugate pair
      const freq = (Math.atan2(im, re) * rate) / (2 * Math.PI);
      const bandwidth = (-Math.log(Math.hypot(re, im)) * rate) / Math.PI;
      if (freq > MIN_FORMANT_HZ && freq < rate / 2 - 100 && bandwidth < MAX_BANDWIDTH_HZ) {
        formants.push(freq);
      }
    }
    if (formants.length < 3) continue;
    formants.sort((p, q) => p - q);
    f1.push(formants[0]!);
    f2.push(formants[1]!);
    f3.push(formants[2]!);
  }
  return { f1Hz: median(f1), f2Hz: median(f2), f3Hz: median(f3), frames: f3.length };
}
