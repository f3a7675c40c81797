// SPDX-License-Identifier: GPL-3.0-or-later
import { fft } from './fft.js';

/**
 * Spectral tilt: slope of the long-term average spectrum of voiced speech in dB per octave,
 * fitted over third-octave bands from 125 Hz to 4.8 kHz. Steeper (more negative) tilt means a
 * softer, breathier source; flatter means a pressed or bright voice.
 */
const FFT_SIZE = 512;
const MAX_FRAMES = 300;

export function spectralTiltDbPerOctave(
  mono: Float32Array,
  sampleRate: number,
  voicedTimesMs: readonly number[],
): number {
  const power = new Float64Array(FFT_SIZE / 2);
  const re = new Float64Array(FFT_SIZE);
  const im = new Float64Array(FFT_SIZE);
  const step = Math.max(1, voicedTimesMs.length / MAX_FRAMES);
  let used = 0;
  for (let pick = 0; pick < voicedTimesMs.length; pick += step) {
    const centre = Math.round((voicedTimesMs[Math.floor(pick)]! * sampleRate) / 1000);
    const start = centre - FFT_SIZE / 2;
    if (start < 0 || start + FFT_SIZE > mono.length) continue;
    for (let i = 0; i < FFT_SIZE; i++) {
      re[i] = mono[start + i]! * (0.5 - 0.5 * Math.cos((2 * Math.PI * i) / (FFT_SIZE - 1)));
      im[i] = 0;
    }
    fft(re, im);
    for (let k = 0; k < FFT_SIZE / 2; k++) power[k]! += re[k]! * re[k]! + im[k]! * im[k]!;
    used++;
  }
  if (used === 0) return 0;
  const binHz = sampleRate / FFT_SIZE;
  const xs: number[] = [];
  const ys: number[] = [];
  for (let centre = 125; centre <= 4800 && centre < sampleRate / 2; centre *= 2 ** (1 / 3)) {
    const lo = Math.max(1, Math.floor((centre * 2 ** (-1 / 6)) / binHz));
    const hi = Math.min(FFT_SIZE / 2 - 1, Math.ceil((centre * 2 ** (1 / 6)) / binHz));
    let sum = 0;
    for (let k = lo; k <= hi; k++) sum += power[k]!;
    const mean = sum / (hi - lo + 1);
    if (mean <= 0) continue;
    xs.push(Math.log2(centre));
    ys.push(10 * Math.log10(mean));
  }
  if (xs.length < 3) return 0;
  const mx = xs.reduce((s, v) => s + v, 0) / xs.length;
  const my = ys.reduce((s, v) => s + v, 0) / ys.length;
  let num = 0;
  let den = 0;
  for (let i = 0; i < xs.length; i++) {
    num += (xs[i]! - mx) * (ys[i]! - my);
    den += (xs[i]! - mx) ** 2;
  }
  return den > 0 ? num / den : 0;
}
