// SPDX-License-Identifier: GPL-3.0-or-later
import { resample } from '../../src/media/audio/index.js';
import {
  DEFAULT_ESPEAK_VOICE,
  EspeakEngine,
  type PhonemeTiming,
  type WordTiming,
} from '../../src/media/tts/index.js';

/** What a fake provider says: real espeak-ng audio at the provider's rate, with real timings. */
export interface FakeSpeech {
  sampleRate: number;
  pcm: Int16Array;
  words: WordTiming[];
  phonemes: PhonemeTiming[];
}

const espeak = new EspeakEngine();

/** A raised-pitch espeak voice, so tests can tell a "cloned" voice from the stock ones. */
const CLONE_VOICE = { ...DEFAULT_ESPEAK_VOICE, pitchBaseHz: 150, pitchTopHz: 225, range: 40 };

const cache = new Map<string, Promise<FakeSpeech>>();

/** The fake's speech for `text`, synthesized once (a benchmark primes it before measuring). */
export function fakeSpeech(text: string, sampleRate: number): Promise<FakeSpeech> {
  const key = `${sampleRate}:${text}`;
  let speech = cache.get(key);
  if (!speech) {
    speech = synthesize(text, sampleRate);
    cache.set(key, speech);
    speech.catch(() => cache.delete(key));
  }
  return speech;
}

async function synthesize(text: string, sampleRate: number): Promise<FakeSpeech> {
  const out = await espeak.synthesizeWithSettings(text, CLONE_VOICE);
  const pcm = resample(out.pcm, out.sampleRate, sampleRate);
  const int16 = new Int16Array(pcm.length);
  for (let i = 0; i < pcm.length; i++) {
    int16[i] = Math.max(-32768, Math.min(32767, Math.round(pcm[i]! * 32767)));
  }
  return { sampleRate, pcm: int16, words: out.words, phonemes: out.phonemes };
}

/** The same speech with its word and phoneme timings moved `lagMs` later (the audio unchanged). */
export function lagTimings(speech: FakeSpeech, lagMs: number): FakeSpeech {
  if (lagMs === 0) return speech;
  const later = <T extends { startMs: number; endMs: number }>(t: T): T => ({
    ...t,
    startMs: t.startMs + lagMs,
    endMs: t.endMs + lagMs,
  });
  return { ...speech, words: speech.words.map(later), phonemes: speech.phonemes.map(later) };
}

/** Base64 of samples [from, to) as little-endian 16-bit PCM. */
export function pcmBase64(pcm: Int16Array, from: number, to: number): string {
  const slice = pcm.slice(from, to);
  return Buffer.from(slice.buffer, slice.byteOffset, slice.byteLength).toString('base64');
}
