// SPDX-License-Identifier: GPL-3.0-or-later
import { describe, expect, it } from 'vitest';
import {
  estimateFormants,
  pitchStatistics,
  spectralTiltDbPerOctave,
  trackPitch,
} from '../../../src/media/voice/index.js';

const RATE = 16000;

/**
 * A synthetic vowel: a glottal pulse train at f0 (optionally gliding) through second-order
 * resonators at the given formants, the textbook source-filter model.
 */
function vowel(f0: (t: number) => number, formants: number[], seconds: number): Float32Array {
  const n = Math.round(RATE * seconds);
  let source = new Float32Array(n);
  let phase = 0;
  for (let i = 0; i < n; i++) {
    const next = phase + f0(i / RATE) / RATE;
    if (Math.floor(next) > Math.floor(phase)) source[i] = 1;
    phase = next;
  }
  for (const f of formants) {
    const bandwidth = 80;
    const r = Math.exp((-Math.PI * bandwidth) / RATE);
    const a1 = 2 * r * Math.cos((2 * Math.PI * f) / RATE);
    const a2 = -r * r;
    const out = new Float32Array(n);
    for (let i = 0; i < n; i++) {
      out[i] = source[i]! + a1 * (out[i - 1] ?? 0) + a2 * (out[i - 2] ?? 0);
    }
    source = out;
  }
  let peak = 0;
  for (const v of source) peak = Math.max(peak, Math.abs(v));
  return source.map((v) => (0.5 * v) / peak);
}

describe('trackPitch (YIN)', () => {
  it('finds a steady 150 Hz voice within 1 %', () => {
    const x = vowel(() => 150, [700, 1200, 2600], 1);
    const stats = pitchStatistics(trackPitch(x, RATE));
    expect(stats.medianHz).toBeGreaterThan(148.5);
    expect(stats.medianHz).toBeLessThan(151.5);
    expect(stats.voicedFraction).toBeGreaterThan(0.8);
  });

  it('reports the spread of a glide from 100 to 200 Hz (one octave)', () => {
    const x = vowel((t) => 100 * 2 ** t, [600, 1100, 2500], 1);
    const stats = pitchStatistics(trackPitch(x, RATE));
    expect(stats.medianHz).toBeGreaterThan(135);
    expect(stats.medianHz).toBeLessThan(150);
    // p10..p90 of a 12-semitone glide spans about 0.8 x 12 semitones.
    expect(stats.spreadSemitones).toBeGreaterThan(8);
    expect(stats.spreadSemitones).toBeLessThan(11);
  });

  it('finds no pitch in silence or white noise', () => {
    expect(pitchStatistics(trackPitch(new Float32Array(RATE), RATE)).voicedFrames).toBe(0);
    let seed = 1;
    const noise = Float32Array.from({ length: RATE }, () => {
      seed = (seed * 1103515245 + 12345) >>> 0;
      return seed / 2 ** 32 - 0.5;
    });
    expect(pitchStatistics(trackPitch(noise, RATE)).voicedFraction).toBeLessThan(0.1);
  });
});

describe('estimateFormants (LPC)', () => {
  it('recovers F1-F3 of a synthetic vowel within 6 %', () => {
    const formants = [730, 1090, 2440]; // /a/ of an adult male (Peterson & Barney)
    const x = vowel(() => 120, formants, 1);
    const times = Array.from({ length: 80 }, (_, i) => 100 + i * 10);
    const est = estimateFormants(x, RATE, times);
    expect(est.frames).toBeGreaterThan(40);
    expect(Math.abs(est.f1Hz / formants[0]! - 1)).toBeLessThan(0.06);
    expect(Math.abs(est.f2Hz / formants[1]! - 1)).toBeLessThan(0.06);
    expect(Math.abs(est.f3Hz / formants[2]! - 1)).toBeLessThan(0.06);
  });

  it('sees a shorter vocal tract as higher formants', () => {
    const times = Array.from({ length: 80 }, (_, i) => 100 + i * 10);
    const male = estimateFormants(
      vowel(() => 120, [730, 1090, 2440], 1),
      RATE,
      times,
    );
    const scaled = estimateFormants(
      vowel(() => 210, [850, 1220, 2810], 1),
      RATE,
      times,
    );
    expect(scaled.f3Hz / male.f3Hz).toBeGreaterThan(1.1);
  });
});

describe('spectralTiltDbPerOctave', () => {
  it('is steeper for a low-passed (softer) source', () => {
    const bright = vowel(() => 150, [700, 1200, 2600], 1);
    const soft = new Float32Array(bright.length);
    for (let i = 1; i < soft.length; i++) soft[i] = 0.9 * soft[i - 1]! + 0.1 * bright[i]!;
    const times = Array.from({ length: 60 }, (_, i) => 100 + i * 12);
    expect(spectralTiltDbPerOctave(soft, RATE, times)).toBeLessThan(
      spectralTiltDbPerOctave(bright, RATE, times) - 3,
    );
  });
});
