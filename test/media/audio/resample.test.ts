// SPDX-License-Identifier: GPL-3.0-or-later
import { describe, expect, it } from 'vitest';
import {
  fromInt16,
  resample,
  StreamingResampler,
  toInt16,
} from '../../../src/media/audio/index.js';

function sine(freq: number, rate: number, seconds: number, amplitude = 0.5): Float32Array {
  return Float32Array.from(
    { length: Math.round(rate * seconds) },
    (_, i) => amplitude * Math.sin((2 * Math.PI * freq * i) / rate),
  );
}

/** Amplitude of one frequency component (Goertzel), over the middle of the signal. */
function amplitudeAt(x: Float32Array, freq: number, rate: number): number {
  const start = Math.floor(x.length * 0.1);
  const end = Math.floor(x.length * 0.9);
  let re = 0;
  let im = 0;
  for (let i = start; i < end; i++) {
    const phase = (2 * Math.PI * freq * i) / rate;
    re += x[i]! * Math.cos(phase);
    im += x[i]! * Math.sin(phase);
  }
  return (2 * Math.hypot(re, im)) / (end - start);
}

/** Frequency from the count of rising zero crossings over the middle of the signal. */
function zeroCrossingFrequency(x: Float32Array, rate: number): number {
  const start = Math.floor(x.length * 0.1);
  const end = Math.floor(x.length * 0.9);
  let first = -1;
  let last = -1;
  let count = 0;
  for (let i = start + 1; i < end; i++) {
    if (x[i - 1]! < 0 && x[i]! >= 0) {
      if (first < 0) first = i;
      else count++;
      last = i;
    }
  }
  return (count * rate) / (last - first);
}

describe('resample', () => {
  const pairs: [number, number, number][] = [
    [22050, 48000, 1000],
    [16000, 48000, 3000],
    [48000, 16000, 440],
    [44100, 16000, 5000],
    [24000, 22050, 200],
  ];
  for (const [from, to, freq] of pairs) {
    it(`keeps a ${freq} Hz sine at ${freq} Hz from ${from} to ${to} Hz`, () => {
      const out = resample(sine(freq, from, 1), from, to);
      expect(out.length).toBe(to);
      expect(zeroCrossingFrequency(out, to)).toBeCloseTo(freq, 0);
      expect(amplitudeAt(out, freq, to)).toBeGreaterThan(0.49);
      expect(amplitudeAt(out, freq, to)).toBeLessThan(0.51);
    });
  }

  it('removes content above the new Nyquist frequency when downsampling (no aliasing)', () => {
    // 11 kHz at 48 kHz would alias to 5 kHz at 16 kHz without the low-pass.
    const out = resample(sine(11000, 48000, 1), 48000, 16000);
    expect(amplitudeAt(out, 5000, 16000)).toBeLessThan(0.5 * 0.001); // below -60 dB
  });

  it('preserves duration for odd lengths and returns a copy for equal rates', () => {
    const x = sine(300, 22050, 0.123);
    expect(resample(x, 22050, 48000).length).toBe(Math.round((x.length * 48000) / 22050));
    const same = resample(x, 16000, 16000);
    expect(same).not.toBe(x);
    expect(Array.from(same)).toEqual(Array.from(x));
    expect(() => resample(x, 0, 16000)).toThrow(RangeError);
  });

  it('is fast enough for real-time use (30 s at 48 kHz to 16 kHz well under a second)', () => {
    const x = sine(200, 48000, 30);
    const cpu = process.cpuUsage();
    resample(x, 48000, 16000);
    const { user, system } = process.cpuUsage(cpu);
    expect((user + system) / 1000).toBeLessThan(1000);
  });
});

describe('StreamingResampler', () => {
  for (const [from, to] of [
    [24000, 48000],
    [22050, 48000],
    [48000, 16000],
    [44056, 48000], // thousands of phases: the interpolated-kernel path
  ] as const) {
    it(`gives the same samples as the whole-buffer resampler when fed in odd chunks (${from} -> ${to})`, () => {
      const x = Float32Array.from(
        { length: 9000 },
        (_, i) => Math.sin(i * 0.05) * Math.cos(i * 0.0031),
      );
      const whole = resample(x, from, to);
      const stream = new StreamingResampler(from, to);
      const parts: Float32Array[] = [];
      let offset = 0;
      for (let size = 1; offset < x.length; size = (size * 7 + 3) % 997) {
        parts.push(stream.push(x.subarray(offset, offset + size)));
        offset += size;
      }
      parts.push(stream.flush());
      const joined = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
      let at = 0;
      for (const p of parts) {
        joined.set(p, at);
        at += p.length;
      }
      expect(joined.length).toBe(whole.length);
      let maxError = 0;
      for (let i = 0; i < whole.length; i++)
        maxError = Math.max(maxError, Math.abs(joined[i]! - whole[i]!));
      expect(maxError).toBeLessThan(1e-5);
    });
  }

  it('emits output as input arrives (small look-ahead) and nothing after flush', () => {
    const stream = new StreamingResampler(24000, 48000);
    const first = stream.push(new Float32Array(2400)); // 100 ms
    expect(first.length).toBeGreaterThan(4700); // all but ~the filter's half width
    expect(first.length).toBeLessThanOrEqual(4800);
    expect(first.length + stream.flush().length).toBe(4800);
    expect(stream.flush().length).toBe(0);
    expect(() => stream.push(new Float32Array(1))).toThrow();
  });
});

describe('toInt16', () => {
  it('rounds, clips and round-trips', () => {
    const x = new Float32Array([0, 0.5, -0.5, 1, -1, 2, -2]);
    expect(Array.from(toInt16(x))).toEqual([0, 16384, -16384, 32767, -32768, 32767, -32768]);
    const back = fromInt16(toInt16(new Float32Array([0.25, -0.75])));
    expect(Array.from(back)).toEqual([0.25, -0.75]);
  });
});
