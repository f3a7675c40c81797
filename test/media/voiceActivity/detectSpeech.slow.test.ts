// SPDX-License-Identifier: GPL-3.0-or-later
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { AudioThreadPool } from '../../../src/media/audioThreads/index.js';

/**
 * Issue 9, item 12: Silero VAD tells speech from silence, a pure tone, noise and music-like
 * signals. Runs on the audio thread pool, as the server does.
 */
const pool = new AudioThreadPool({ size: 1, taskTimeoutMs: 120_000 });
afterAll(() => pool.close());

const fixture = (name: string) => new Uint8Array(readFileSync(`test/fixtures/audio/${name}`));
const RATE = 16_000;

function signal(seconds: number, sample: (t: number, i: number) => number): Float32Array {
  return Float32Array.from({ length: Math.round(seconds * RATE) }, (_, i) => sample(i / RATE, i));
}

let seed = 7;
const noise = () => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 1073741824 - 1;
};

/** Piano-like notes with harmonics and decay, four a second apart: music, not speech. */
const melody = (t: number) => {
  const f = [261.6, 329.6, 392, 523.3, 440, 349.2][Math.floor(t * 2) % 6]!;
  const env = Math.exp(-3 * ((t * 2) % 1));
  const tone = (k: number) => Math.sin(2 * Math.PI * k * f * t) / k;
  return 0.3 * env * (tone(1) + tone(2) + tone(3) + tone(4));
};

describe('speech detection (Silero VAD)', () => {
  it('finds speech in real recordings of several speakers and formats', async () => {
    for (const name of [
      'speech.mp3',
      'voice-flite-rms-male.ogg',
      'voice-flite-slt-female.mp3',
      'voice-espeak-f3-roomy.ogg',
    ]) {
      const clip = await pool.decode(fixture(name));
      const found = await pool.detectSpeech(clip.mono, clip.sampleRate);
      expect(found.hasSpeech, `${name}: ${JSON.stringify(found)}`).toBe(true);
    }
  }, 120_000);

  it('finds none in silence, a pure tone, white noise or a melody', async () => {
    const cases: Record<string, Float32Array> = {
      silence: new Float32Array(10 * RATE),
      'sine 220 Hz': signal(10, (t) => 0.5 * Math.sin(2 * Math.PI * 220 * t)),
      'sine 1 kHz': signal(10, (t) => 0.5 * Math.sin(2 * Math.PI * 1000 * t)),
      'white noise': signal(10, () => 0.3 * noise()),
      melody: signal(10, melody),
    };
    for (const [name, mono] of Object.entries(cases)) {
      const found = await pool.detectSpeech(mono, RATE);
      expect(found.hasSpeech, `${name}: ${JSON.stringify(found)}`).toBe(false);
    }
  }, 120_000);

  it('examines at most 30 s of a long clip and reports what it measured', async () => {
    const clip = await pool.decode(fixture('voice-flite-rms-male.ogg'));
    // A 60 s clip: the recording repeated.
    const long = new Float32Array(60 * clip.sampleRate);
    for (let i = 0; i < long.length; i++) long[i] = clip.mono[i % clip.mono.length]!;
    const started = performance.now();
    const found = await pool.detectSpeech(long, clip.sampleRate);
    const ms = performance.now() - started;
    expect(found.analysedSeconds).toBeLessThanOrEqual(30.1);
    expect(found.hasSpeech).toBe(true);
    console.log(`VAD on a 60 s clip (30 s examined): ${Math.round(ms)} ms`);
  }, 120_000);
});
