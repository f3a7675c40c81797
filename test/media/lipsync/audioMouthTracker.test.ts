// SPDX-License-Identifier: GPL-3.0-or-later
import { describe, expect, it } from 'vitest';
import { AudioMouthTracker } from '../../../src/media/lipsync/audioMouthTracker.js';

/** A vowel-like buzz: a 140 Hz pulse train shaped by two formants (rough additive synthesis). */
function vowel(ms: number, rate: number, f1: number, f2: number, gain = 0.3): Float32Array {
  const n = Math.round((rate * ms) / 1000);
  const out = new Float32Array(n);
  const f0 = 140;
  for (let h = 1; f0 * h < Math.min(5000, rate / 2); h++) {
    const f = f0 * h;
    // Harmonic amplitude: spectral tilt times resonance peaks at the formants.
    const amp = (1 / h) * (1 + 6 / (1 + ((f - f1) / 90) ** 2) + 4 / (1 + ((f - f2) / 120) ** 2));
    for (let i = 0; i < n; i++) out[i]! += amp * Math.sin((2 * Math.PI * f * i) / rate);
  }
  let peak = 0;
  for (const v of out) peak = Math.max(peak, Math.abs(v));
  for (let i = 0; i < n; i++) out[i] = (out[i]! / peak) * gain;
  return out;
}

function noise(ms: number, rate: number, gain: number, seed = 1): Float32Array {
  const out = new Float32Array(Math.round((rate * ms) / 1000));
  let s = seed;
  let prev = 0;
  for (let i = 0; i < out.length; i++) {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    const white = s / 0x3fffffff - 1;
    // First difference: noise tilted to high frequencies, like s.
    out[i] = (white - prev) * gain * 0.5;
    prev = white;
  }
  return out;
}

function concat(...parts: Float32Array[]): Float32Array {
  const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

const silence = (ms: number, rate: number): Float32Array =>
  new Float32Array(Math.round((rate * ms) / 1000));

describe('AudioMouthTracker', () => {
  it('keeps the mouth closed in silence and where no audio was pushed', () => {
    const t = new AudioMouthTracker();
    expect(t.poseAt(0)).toEqual({ viseme: 'rest', openness: 0 });
    t.push(silence(1000, 48000), 48000);
    for (let ms = 0; ms < 1000; ms += 40) expect(t.poseAt(ms).openness).toBe(0);
    expect(t.poseAt(5000)).toEqual({ viseme: 'rest', openness: 0 });
    expect(t.endMs).toBe(1000);
  });

  it('opens for a loud vowel, with attack and release', () => {
    const rate = 48000;
    const t = new AudioMouthTracker({ leadMs: 0 });
    // 300 ms silence, 500 ms "ah", 500 ms silence, pushed in 40 ms chunks as a session would.
    const pcm = concat(silence(300, rate), vowel(500, rate, 750, 1200), silence(500, rate));
    for (let i = 0; i < pcm.length; i += 1920) t.push(pcm.subarray(i, i + 1920), rate);
    expect(t.poseAt(250).openness).toBe(0);
    // Attack: partly open 10 ms in, wide open by 80 ms.
    const early = t.poseAt(310).openness;
    const open = t.poseAt(380).openness;
    expect(early).toBeGreaterThan(0);
    expect(early).toBeLessThan(open);
    expect(open).toBeGreaterThan(0.6);
    expect(t.poseAt(550).viseme).not.toBe('rest');
    // Release: still closing 30 ms after the end, closed by 250 ms.
    expect(t.poseAt(830).openness).toBeGreaterThan(0.1);
    expect(t.poseAt(1050).openness).toBeLessThan(0.05);
  });

  it('follows loudness: a quieter syllable opens less than a loud one', () => {
    const rate = 24000;
    const t = new AudioMouthTracker({ leadMs: 0 });
    t.push(
      concat(
        vowel(300, rate, 750, 1200, 0.3),
        silence(200, rate),
        vowel(300, rate, 750, 1200, 0.03),
      ),
      rate,
    );
    expect(t.poseAt(650).openness).toBeLessThan(t.poseAt(150).openness * 0.75);
  });

  it('tells hiss from voiced sound', () => {
    const rate = 16000;
    const shapeOf = (pcm: Float32Array): string => {
      const t = new AudioMouthTracker({ leadMs: 0 });
      t.push(pcm, rate);
      return t.poseAt(200).viseme;
    };
    expect(shapeOf(noise(400, rate, 0.3))).toMatch(/^(SZ|CH)$/);
    expect(shapeOf(vowel(400, rate, 750, 1200))).not.toMatch(/^(SZ|CH|rest)$/);
  });

  it('gives the same poses for Int16 and Float32 input, at any sample rate', () => {
    const a = new AudioMouthTracker();
    const b = new AudioMouthTracker();
    const c = new AudioMouthTracker();
    const f = concat(vowel(300, 22050, 750, 1200), silence(300, 22050));
    a.push(f, 22050);
    b.push(
      Int16Array.from(f, (v) => Math.round(v * 32767)),
      22050,
    );
    c.push(concat(vowel(300, 48000, 750, 1200), silence(300, 48000)), 48000);
    for (let ms = 0; ms < 600; ms += 40) {
      expect(b.poseAt(ms).openness).toBeCloseTo(a.poseAt(ms).openness, 2);
      expect(Math.abs(c.poseAt(ms).openness - a.poseAt(ms).openness)).toBeLessThan(0.15);
    }
  });

  it('says up to when its poses are final: audio pushed after changes none before it', () => {
    const rate = 48000;
    const t = new AudioMouthTracker();
    // Pushed in 37 ms pieces (not whole hops), a vowel running on across every boundary.
    const speech = concat(
      vowel(400, rate, 750, 1200),
      noise(100, rate, 0.2),
      vowel(300, rate, 400, 900),
    );
    const piece = Math.round((rate * 37) / 1000);
    let changedAfter = 0;
    for (let from = 0; from + piece <= speech.length; from += piece) {
      const final = t.finalUntilMs;
      const before = [];
      for (let ms = 0; ms < t.endMs + 40; ms += 5) before.push(t.poseAt(ms));
      t.push(speech.subarray(from, from + piece), rate);
      for (let i = 0; i < before.length; i++) {
        const ms = i * 5;
        if (ms < final) expect(t.poseAt(ms), `${ms} ms, final until ${final}`).toEqual(before[i]);
        else if (JSON.stringify(t.poseAt(ms)) !== JSON.stringify(before[i])) changedAfter++;
      }
    }
    // The bound is not loose: poses past it did change as the audio came.
    expect(changedAfter).toBeGreaterThan(10);
  });

  it('places chunks on the playout clock: gaps are silence, truncate closes the mouth', () => {
    const rate = 48000;
    const t = new AudioMouthTracker({ leadMs: 0 });
    t.push(vowel(200, rate, 750, 1200), rate, 1000);
    expect(t.poseAt(900).openness).toBe(0);
    expect(t.poseAt(1150).openness).toBeGreaterThan(0.5);
    // The next utterance starts at 2000 ms: the gap is silent.
    t.push(vowel(200, rate, 750, 1200), rate, 2000);
    expect(t.poseAt(1600).openness).toBe(0);
    expect(t.poseAt(2150).openness).toBeGreaterThan(0.5);
    // An interrupt at 2100 ms drops what followed.
    t.truncate(2100);
    expect(t.poseAt(2150)).toEqual({ viseme: 'rest', openness: 0 });
    expect(t.endMs).toBe(2100);
    t.reset();
    expect(t.poseAt(1150)).toEqual({ viseme: 'rest', openness: 0 });
  });
});
