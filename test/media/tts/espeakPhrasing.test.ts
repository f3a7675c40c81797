// SPDX-License-Identifier: GPL-3.0-or-later
import { readFileSync } from 'node:fs';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeAudio } from '../../../src/media/audio/index.js';
import { PAUSE_MS, pauseAfter } from '../../../src/media/tts/espeakPhrasing.js';
import {
  EspeakEngine,
  splitSentences,
  stockVoiceProfile,
  stopEspeakThread,
  type SpeechChunk,
} from '../../../src/media/tts/index.js';

const engine = new EspeakEngine();
const REPLY =
  'The weather is lovely today. Shall we walk to the park, or stay in? I think a walk would do us good, and the dog agrees.';

afterAll(() => stopEspeakThread());

/** RMS of each 10 ms window. */
function windowRms(pcm: Float32Array, rate: number): number[] {
  const win = Math.round(rate / 100);
  const out: number[] = [];
  for (let i = 0; i + win <= pcm.length; i += win) {
    let e = 0;
    for (let j = i; j < i + win; j++) e += pcm[j]! * pcm[j]!;
    out.push(Math.sqrt(e / win));
  }
  return out;
}

/**
 * Silent stretches of at least 100 ms between sounds, ms: 10 ms windows under `silence` RMS
 * (-40 dBFS by default, right for synthesized speech, whose silence is digital).
 */
function pauses(pcm: Float32Array, rate: number, silence = 0.01): number[] {
  const out: number[] = [];
  let quiet = 0;
  let heard = false;
  for (const rms of windowRms(pcm, rate)) {
    if (rms < silence) quiet++;
    else {
      if (heard && quiet >= 10) out.push(quiet * 10);
      quiet = 0;
      heard = true;
    }
  }
  return out;
}

/** Seconds from the first to the last 10 ms window louder than `silence` RMS. */
function speechSpan(pcm: Float32Array, rate: number, silence: number): number {
  const loud = windowRms(pcm, rate).map((rms) => rms >= silence);
  return (loud.lastIndexOf(true) - loud.indexOf(true) + 1) / 100;
}

function concat(chunks: SpeechChunk[]): Float32Array {
  const out = new Float32Array(chunks.reduce((n, c) => n + c.pcm.length, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c.pcm, at);
    at += c.pcm.length;
  }
  return out;
}

describe('espeak phrasing', () => {
  it('pauses between sentences and at commas like a person, longer than plain espeak-ng (no run-on)', async () => {
    const voice = { voiceId: 'voice_Ada000000000000000000001', stored: null };
    const channel = engine.openChannel(voice, pino({ level: 'silent' }));
    const chunks: SpeechChunk[] = [];
    for await (const c of channel.speak(REPLY, new AbortController().signal)) chunks.push(c);
    const rate = chunks[0]!.sampleRate;
    const ours = pauses(concat(chunks), rate);
    // Plain espeak-ng on the whole reply, for reference: about 300 ms between sentences and 170
    // at the commas.
    const plain = await engine.synthesize(REPLY, stockVoiceProfile(voice.voiceId)!);
    const plainPauses = pauses(plain.pcm, plain.sampleRate);
    console.log(
      `pauses in the reply: Visage ${ours.join(', ')} ms; plain espeak-ng ${plainPauses.join(', ')} ms`,
    );
    // In order: a sentence, a comma, a sentence, a comma.
    expect(ours).toHaveLength(4);
    const [sentence1, comma1, sentence2, comma2] = ours as [number, number, number, number];
    for (const ms of [sentence1, sentence2]) {
      expect(ms).toBeGreaterThanOrEqual(Math.max(...plainPauses));
      expect(ms).toBeGreaterThanOrEqual(PAUSE_MS.sentence - 40);
      expect(ms).toBeLessThan(700);
    }
    // The commas pause longer than plain espeak-ng's, and shorter than a sentence.
    for (const ms of [comma1, comma2]) {
      expect(ms).toBeGreaterThanOrEqual(PAUSE_MS.clause - 40);
      expect(ms).toBeGreaterThan(Math.max(...plainPauses.filter((p) => p < 250)) + 50);
      expect(ms).toBeLessThan(Math.min(sentence1, sentence2));
    }
    // Word timings still line up with the trimmed audio (each later chunk's first word near its
    // start). The reply is cut into its five clauses, each ending in the chunk that carries its
    // phonemes (the first streams: its pieces carry their words, its last piece the phonemes).
    const clauses = chunks.filter((c) => c.phonemes.length > 0);
    expect(clauses).toHaveLength(5);
    for (const c of clauses.slice(1)) expect(c.words[0]!.startMs).toBeLessThan(80);
  }, 30_000);

  it('pauses at the commas about as long as a real speaker does at our pace (his pauses and ours printed)', async () => {
    // John F. Kennedy, inaugural address, 1961 (public domain; test/fixtures/audio/README.md).
    const SENTENCE =
      'And so, my fellow Americans, ask not what your country can do for you, ask what you can do for your country.';
    const clip = await decodeAudio(
      new Uint8Array(readFileSync('test/fixtures/audio/real-speaker-jfk.wav')),
    );
    // A recording has a noise floor (about -42 dBFS here): silence is relative to its loudness,
    // under 5 % of its 95th-percentile window.
    const loud = windowRms(clip.mono, clip.sampleRate).sort((a, b) => a - b);
    const floor = 0.05 * loud[Math.floor(0.95 * (loud.length - 1))]!;
    const speaker = pauses(clip.mono, clip.sampleRate, floor);
    const voice = { voiceId: 'voice_Ada000000000000000000001', stored: null };
    const chunks: SpeechChunk[] = [];
    const channel = engine.openChannel(voice, pino({ level: 'silent' }));
    for await (const c of channel.speak(SENTENCE, new AbortController().signal)) chunks.push(c);
    const ours = pauses(concat(chunks), chunks[0]!.sampleRate);
    const plain = await engine.synthesize(SENTENCE, stockVoiceProfile(voice.voiceId)!);
    const plainPauses = pauses(plain.pcm, plain.sampleRate);
    // He speaks far slower than espeak-ng (an orator's pace): his pauses, scaled to the time
    // plain espeak-ng takes for the same words, are what a person would pause at our pace.
    const pace =
      speechSpan(plain.pcm, plain.sampleRate, 0.01) / speechSpan(clip.mono, clip.sampleRate, floor);
    const seconds = (n: number, rate: number) => (n / rate).toFixed(1);
    console.log(
      [
        `pauses of 100 ms or more in "${SENTENCE}":`,
        `  the speaker (${seconds(clip.mono.length, clip.sampleRate)} s): ${speaker.join(', ')} ms; at espeak-ng's pace (x ${pace.toFixed(2)}): ${speaker.map((ms) => Math.round(ms * pace)).join(', ')} ms`,
        `  Visage's espeak (${seconds(concat(chunks).length, chunks[0]!.sampleRate)} s): ${ours.join(', ')} ms`,
        `  plain espeak-ng (${seconds(plain.pcm.length, plain.sampleRate)} s): ${plainPauses.join(', ')} ms`,
      ].join('\n'),
    );
    // The speaker runs through "And so," and pauses 1100 ms after "Americans", 500 after "for
    // you", and around "not" for emphasis (270 and 990 ms): four pauses of 250 ms or more, the
    // clause pauses the longest with the emphasis one.
    expect(speaker.filter((ms) => ms >= 250).length).toBeGreaterThanOrEqual(4);
    const hisClausePause = Math.min(...speaker.filter((ms) => ms >= 400)) * pace;
    // Ours pauses at the three commas (no run-on), each about as long as his shorter clause
    // pause at our pace, clearly longer than plain espeak-ng's, and never as long as his longest.
    expect(ours).toHaveLength(3);
    for (const ms of ours) {
      expect(ms).toBeGreaterThanOrEqual(0.85 * hisClausePause);
      expect(ms).toBeLessThanOrEqual(1.25 * hisClausePause);
      expect(ms).toBeGreaterThan(Math.max(...plainPauses) + 50);
      expect(ms).toBeLessThan(Math.max(...speaker));
    }
  }, 30_000);

  it('chooses the pause by how a chunk ends', () => {
    const text = 'One. Two, three\n\nFour';
    const [a] = splitSentences('One. Two');
    expect(pauseAfter(a!, 'One. Two')).toBe(PAUSE_MS.sentence);
    expect(pauseAfter({ text: 'Two,', start: 5, end: 9 }, text)).toBe(PAUSE_MS.clause);
    expect(pauseAfter({ text: 'three', start: 10, end: 15 }, text)).toBe(PAUSE_MS.paragraph);
    expect(pauseAfter({ text: 'Two', start: 5, end: 8 }, text)).toBe(PAUSE_MS.word);
  });
});
