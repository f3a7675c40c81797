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
  it('pauses between sentences like a person and keeps the clause pauses (no run-on)', async () => {
    const voice = { voiceId: 'voice_Ada000000000000000000001', stored: null };
    const channel = engine.openChannel(voice, pino({ level: 'silent' }));
    const chunks: SpeechChunk[] = [];
    for await (const c of channel.speak(REPLY, new AbortController().signal)) chunks.push(c);
    const rate = chunks[0]!.sampleRate;
    const ours = pauses(concat(chunks), rate);
    // Plain espeak-ng on the whole reply, for reference: ~300 ms between sentences.
    const plain = await engine.synthesize(REPLY, stockVoiceProfile(voice.voiceId)!);
    const plainPauses = pauses(plain.pcm, plain.sampleRate);
    const sentencePauses = ours.filter((ms) => ms >= 300);
    const clausePauses = ours.filter((ms) => ms >= 100 && ms < 300);
    expect(sentencePauses).toHaveLength(2);
    for (const ms of sentencePauses) {
      expect(ms).toBeGreaterThanOrEqual(Math.max(...plainPauses));
      expect(ms).toBeGreaterThanOrEqual(PAUSE_MS.sentence - 40);
      expect(ms).toBeLessThan(700);
    }
    // The two commas still pause, as in plain espeak-ng.
    expect(clausePauses.length).toBeGreaterThanOrEqual(2);
    // Word timings still line up with the trimmed audio (each later sentence's first word near
    // its start; the first sentence streams, its timings come with its last piece).
    const sentences = chunks.filter((c) => c.words.length > 0);
    expect(sentences).toHaveLength(3);
    for (const c of sentences.slice(1)) expect(c.words[0]!.startMs).toBeLessThan(80);
  }, 30_000);

  it('pauses at every comma where a real speaker does (his pauses and ours printed)', async () => {
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
    const seconds = (n: number, rate: number) => (n / rate).toFixed(1);
    console.log(
      [
        `pauses of 100 ms or more in "${SENTENCE}":`,
        `  the speaker (${seconds(clip.mono.length, clip.sampleRate)} s): ${speaker.join(', ')} ms`,
        `  Visage's espeak (${seconds(concat(chunks).length, chunks[0]!.sampleRate)} s): ${ours.join(', ')} ms`,
        `  plain espeak-ng (${seconds(plain.pcm.length, plain.sampleRate)} s): ${plainPauses.join(', ')} ms`,
      ].join('\n'),
    );
    // The speaker pauses at each of the three commas, and once more for emphasis after "ask
    // not": four pauses of 250 ms or more (oratory: 500 to 1100 ms at the commas).
    expect(speaker.filter((ms) => ms >= 250).length).toBeGreaterThanOrEqual(4);
    // Ours pauses at the three commas too (no run-on), each at least as long as plain espeak-ng's
    // shortest, and never longer than the speaker's longest.
    expect(ours).toHaveLength(3);
    for (const ms of ours) {
      expect(ms).toBeGreaterThanOrEqual(Math.min(...plainPauses));
      expect(ms).toBeLessThanOrEqual(Math.max(...speaker));
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
