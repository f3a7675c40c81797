// SPDX-License-Identifier: GPL-3.0-or-later
import { beforeAll, describe, expect, it } from 'vitest';
import { resample } from '../../../src/media/audio/index.js';
import { alignPhonemes } from '../../../src/media/lipsync/alignPhonemes.js';
import { AudioMouthTracker } from '../../../src/media/lipsync/audioMouthTracker.js';
import { SpeechFeatures } from '../../../src/media/lipsync/speechFeatures.js';
import { TailAlignment } from '../../../src/media/lipsync/tailAlignment.js';
import { wordsMouth } from '../../../src/media/lipsync/speechMouth.js';
import type { MouthPose, Viseme } from '../../../src/media/lipsync/viseme.js';
import {
  mouthPoseAt,
  visemeTimeline,
  type PhonemeTiming,
} from '../../../src/media/lipsync/visemeTimeline.js';
import { synthesizeWithEspeak } from '../../../src/media/tts/espeakEngine.js';
import { espeakRuntime, type EspeakRuntime } from '../../../src/media/tts/espeakRuntime.js';
import { stockVoiceProfile } from '../../../src/media/tts/espeakStockVoices.js';
import { DEFAULT_ESPEAK_VOICE } from '../../../src/media/tts/espeakVoiceSettings.js';

/**
 * Audio mode against text mode on the same speech. The "agent's audio" is espeak-ng in the stock
 * voices (another pitch, timbre and speed than the template), each sentence synthesized apart
 * and joined with a pause the words do not announce, so its true phoneme timings are known; the
 * words are synthesized again in espeak's default voice, as a session does, and aligned to it.
 * Truth is text mode's mouth: the viseme timeline of the true timings.
 */
const SENTENCES = [
  'Maybe my mother bought a big blue map, but please pay me back by Monday.',
  'Who moved my old blue boat to Boston? Mom bought new boots.',
];
const TEXT = SENTENCES.join(' ');
const RATE = 48_000;
const PAUSE_MS = 450;

interface Speech {
  pcm: Float32Array;
  phonemes: PhonemeTiming[];
}

function agentSpeech(runtime: EspeakRuntime, voiceId: string, sentences = SENTENCES): Speech {
  const profile = stockVoiceProfile(voiceId)!;
  const parts: Float32Array[] = [];
  const phonemes: PhonemeTiming[] = [];
  let at = 0;
  for (const sentence of sentences) {
    const s = synthesizeWithEspeak(runtime, sentence, profile.espeak);
    const pcm = resample(s.pcm, s.sampleRate, RATE);
    const offset = (at / RATE) * 1000;
    for (const p of s.phonemes) {
      phonemes.push({ ...p, startMs: p.startMs + offset, endMs: p.endMs + offset });
    }
    parts.push(pcm, new Float32Array(Math.round((RATE * PAUSE_MS) / 1000)));
    at += pcm.length + Math.round((RATE * PAUSE_MS) / 1000);
  }
  const pcm = new Float32Array(at);
  let o = 0;
  for (const p of parts) {
    pcm.set(p, o);
    o += p.length;
  }
  return { pcm, phonemes };
}

function features(pcm: Float32Array, rate: number): Float32Array {
  const f = new SpeechFeatures();
  // In pieces, as audio arrives.
  for (let i = 0; i < pcm.length; i += 4800) f.push(pcm.subarray(i, i + 4800), rate);
  f.end();
  return f.frames;
}

/** Coarse classes a viewer tells apart: lips shut, lip on teeth, rounded, spread, open. */
function coarse(v: Viseme): string {
  if (v === 'rest' || v === 'MBP') return 'shut';
  if (v === 'FV') return 'FV';
  if (v === 'O' || v === 'U' || v === 'WQ' || v === 'R') return 'round';
  if (v === 'I' || v === 'SZ' || v === 'CH' || v === 'TH') return 'spread';
  return 'open';
}

interface Score {
  exact: number;
  coarse: number;
  closures: number;
  closuresOf: number;
}

/** Per 10 ms frame of speech, `poseAt` against the truth; and the bilabials where the lips shut. */
function score(speech: Speech, poseAt: (t: number) => MouthPose): Score {
  const truth = visemeTimeline(speech.phonemes);
  const first = speech.phonemes[0]!.startMs;
  const last = speech.phonemes[speech.phonemes.length - 1]!.endMs;
  let n = 0;
  let exact = 0;
  let same = 0;
  for (let t = first; t < last; t += 10) {
    const want = mouthPoseAt(truth, t);
    if (want.openness === 0 && want.viseme === 'rest') continue;
    const got = poseAt(t);
    n++;
    if (got.viseme === want.viseme) exact++;
    if (coarse(got.viseme) === coarse(want.viseme)) same++;
  }
  // A bilabial is caught when the lips shut (MBP, or nearly closed) during it; the mouth forms
  // the sound up to 30 ms before it is heard.
  const bilabials = speech.phonemes.filter((p) => /^[ˈˌ]?[pbm]/.test(p.ipa));
  let caught = 0;
  for (const p of bilabials) {
    let shut = false;
    for (let t = p.startMs - 30; t <= p.endMs && !shut; t += 10) {
      const pose = poseAt(t);
      shut = pose.viseme === 'MBP' || pose.openness < 0.1;
    }
    if (shut) caught++;
  }
  return { exact: exact / n, coarse: same / n, closures: caught, closuresOf: bilabials.length };
}

const fmt = (s: Score) =>
  `viseme ${(s.exact * 100).toFixed(0)} %, class ${(s.coarse * 100).toFixed(0)} %, ` +
  `bilabials shut ${s.closures}/${s.closuresOf}`;

describe('shapes from the words in audio mode', () => {
  let runtime: EspeakRuntime;
  let template: { frames: Float32Array; phonemes: PhonemeTiming[] };
  beforeAll(async () => {
    runtime = await espeakRuntime();
    const t = synthesizeWithEspeak(runtime, TEXT, DEFAULT_ESPEAK_VOICE);
    template = { frames: features(t.pcm, t.sampleRate), phonemes: t.phonemes };
  });

  for (const voice of ['voice_Milo00000000000000000001', 'voice_Ada000000000000000000001']) {
    it(`words aligned to the audio beat the audio alone (${voice.slice(6, 10)})`, () => {
      const speech = agentSpeech(runtime, voice);
      const tracker = new AudioMouthTracker();
      for (let i = 0; i < speech.pcm.length; i += 4800) {
        tracker.push(speech.pcm.subarray(i, i + 4800), RATE);
      }
      const audio = features(speech.pcm, RATE);
      const started = performance.now();
      const aligned = alignPhonemes({
        template: template.frames,
        phonemes: template.phonemes,
        audio,
        openEnd: false,
      });
      const tookMs = performance.now() - started;
      expect(aligned).toBeDefined();
      const words = visemeTimeline(aligned!.phonemes);
      // A uniform stretch of the words over the audio, for comparison: the pause between the
      // sentences is where it goes wrong.
      const scale =
        ((speech.pcm.length / RATE) * 1000) /
        template.phonemes[template.phonemes.length - 1]!.endMs;
      const stretched = visemeTimeline(
        template.phonemes.map((p) => ({
          ...p,
          startMs: p.startMs * scale,
          endMs: p.endMs * scale,
        })),
      );

      const audioOnly = score(speech, (t) => tracker.poseAt(t));
      const withWords = score(speech, (t) => wordsMouth(tracker.poseAt(t), mouthPoseAt(words, t)));
      const uniform = score(speech, (t) =>
        wordsMouth(tracker.poseAt(t), mouthPoseAt(stretched, t)),
      );
      const ignored = score(speech, (t) =>
        wordsMouth(tracker.poseAt(t), { viseme: 'rest', openness: 0 }),
      );
      console.log(
        `${voice.slice(6, 10)}: mismatch ${aligned!.mismatch.toFixed(2)}, ` +
          `${((speech.pcm.length / RATE) * 1000).toFixed(0)} ms aligned in ${tookMs.toFixed(0)} ms\n` +
          `  audio alone:           ${fmt(audioOnly)}\n` +
          `  words, stretched:      ${fmt(uniform)}\n` +
          `  words, aligned (DTW):  ${fmt(withWords)}`,
      );
      expect(ignored).toEqual(audioOnly);
      expect(withWords.exact).toBeGreaterThan(audioOnly.exact + 0.25);
      expect(withWords.coarse).toBeGreaterThan(audioOnly.coarse + 0.15);
      expect(withWords.closures / withWords.closuresOf).toBeGreaterThan(0.8);
      expect(withWords.closures).toBeGreaterThan(audioOnly.closures);
    });
  }

  it('aligns audio that has only begun: the words heard so far, not all of them', () => {
    const speech = agentSpeech(runtime, 'voice_Milo00000000000000000001');
    const part = speech.pcm.subarray(0, Math.round(speech.pcm.length * 0.55));
    const aligned = alignPhonemes({
      template: template.frames,
      phonemes: template.phonemes,
      audio: features(part, RATE),
      openEnd: true,
    });
    expect(aligned).toBeDefined();
    const partMs = (part.length / RATE) * 1000;
    const lastAligned = aligned!.phonemes[aligned!.phonemes.length - 1]!;
    // It stops about where the audio does (not stretched to all the words).
    expect(lastAligned.endMs).toBeLessThan(partMs + 100);
    expect(aligned!.phonemes.length).toBeLessThan(template.phonemes.length * 0.8);
    const truth = visemeTimeline(speech.phonemes.filter((p) => p.endMs < partMs - 200));
    const words = visemeTimeline(aligned!.phonemes);
    let same = 0;
    let n = 0;
    for (let t = truth.startMs; t < partMs - 300; t += 10) {
      const want = mouthPoseAt(truth, t);
      if (want.openness === 0) continue;
      n++;
      if (mouthPoseAt(words, t).viseme === want.viseme) same++;
    }
    console.log(
      `open end: ${aligned!.phonemes.length} phonemes aligned, viseme ${((same / n) * 100).toFixed(0)} %`,
    );
    expect(same / n).toBeGreaterThan(0.6);
  });

  it('aligns the words known so far to audio that goes on past them', () => {
    const speech = agentSpeech(runtime, 'voice_Milo00000000000000000001');
    // The agent's transcript has reached the first sentence; the audio has both.
    const first = synthesizeWithEspeak(runtime, SENTENCES[0]!, DEFAULT_ESPEAK_VOICE);
    const aligned = alignPhonemes({
      template: features(first.pcm, first.sampleRate),
      phonemes: first.phonemes,
      audio: features(speech.pcm, RATE),
      openEnd: true,
    });
    expect(aligned).toBeDefined();
    // The true end of the first sentence: its last phoneme before the pause.
    const gap = speech.phonemes.findIndex(
      (p, i) => i > 0 && p.startMs - speech.phonemes[i - 1]!.endMs > PAUSE_MS / 2,
    );
    const sentenceEnd = speech.phonemes[gap - 1]!.endMs;
    console.log(
      `words short of the audio: covered ${aligned!.coveredMs.toFixed(0)} ms, first sentence ends at ${sentenceEnd.toFixed(0)} ms of ${((speech.pcm.length / RATE) * 1000).toFixed(0)}`,
    );
    expect(Math.abs(aligned!.coveredMs - sentenceEnd)).toBeLessThan(150);
    const lastAligned = aligned!.phonemes[aligned!.phonemes.length - 1]!;
    expect(lastAligned.endMs).toBeLessThan(sentenceEnd + 150);
  });

  it('gives up when the audio does not say the words', () => {
    const speech = agentSpeech(runtime, 'voice_Milo00000000000000000001');
    const other = synthesizeWithEspeak(
      runtime,
      'Seven tired zebras sit silently, facing east in the icy Siberian twilight, whispering.',
      DEFAULT_ESPEAK_VOICE,
    );
    const aligned = alignPhonemes({
      template: features(other.pcm, other.sampleRate),
      phonemes: other.phonemes,
      audio: features(speech.pcm, RATE),
      openEnd: false,
    });
    console.log(`wrong words: mismatch ${aligned?.mismatch.toFixed(2) ?? 'above the bound'}`);
    expect(aligned).toBeUndefined();
  });

  // 300 alignments and their audio's features: seconds on a busy machine (a longer timeout).
  it('aligns streaming audio tail by tail: each alignment the same work, however long the speech', () => {
    // Twice the sentences (some 17 s), fed 50 ms at a time as a real-time stream brings them.
    const sentences = [...SENTENCES, ...SENTENCES];
    const speech = agentSpeech(runtime, 'voice_Milo00000000000000000001', sentences);
    const words = synthesizeWithEspeak(runtime, sentences.join(' '), DEFAULT_ESPEAK_VOICE);
    const tail = new TailAlignment();
    tail.setTemplate(features(words.pcm, words.sampleRate), words.phonemes);
    const audio = new SpeechFeatures();
    const tracker = new AudioMouthTracker();
    const worked: { atMs: number; audioFrames: number; templateFrames: number }[] = [];
    let last: ReturnType<TailAlignment['align']>;
    const step = RATE / 20;
    for (let i = 0; i < speech.pcm.length; i += step) {
      const piece = speech.pcm.subarray(i, i + step);
      audio.push(piece, RATE);
      tracker.push(piece, RATE);
      const end = i + step >= speech.pcm.length;
      if (end) audio.end();
      const aligned = tail.align(audio.frames, !end);
      if (!aligned) continue;
      last = aligned;
      worked.push({ atMs: audio.length * 10, ...aligned });
    }
    expect(last).toBeDefined();
    const totalMs = (speech.pcm.length / RATE) * 1000;
    const late = worked.filter((w) => w.atMs > 2000);
    const early = worked.filter((w) => w.atMs <= totalMs / 2);
    const most = (ws: typeof worked, key: 'audioFrames' | 'templateFrames') =>
      Math.max(...ws.map((w) => w[key]));
    const result = score(speech, (t) =>
      wordsMouth(tracker.poseAt(t), mouthPoseAt(visemeTimeline(last!.phonemes), t)),
    );
    console.log(
      `tail by tail: ${worked.length} alignments over ${totalMs.toFixed(0)} ms; audio per ` +
        `alignment after 2 s at most ${most(late, 'audioFrames') * 10} ms (template ` +
        `${most(late, 'templateFrames') * 10} ms), in the second half at most ` +
        `${
          most(
            worked.filter((w) => w.atMs > totalMs / 2),
            'audioFrames',
          ) * 10
        } ms; ${fmt(result)}`,
    );
    // Nearly every 50 ms step placed words.
    expect(worked.length).toBeGreaterThan((totalMs / 50) * 0.9);
    // The work per alignment is the tail since the last settled phoneme: at most some 1.5 s of
    // audio (a pause between sentences lengthens it), not the whole utterance.
    expect(most(late, 'audioFrames')).toBeLessThanOrEqual(150);
    expect(most(late, 'templateFrames')).toBeLessThanOrEqual(2 * 150 + 100);
    // It does not grow: the second half's alignments are no larger than the first half's (the
    // pauses between sentences differ a little: measured 1.10 s against 1.08 s).
    expect(
      most(
        worked.filter((w) => w.atMs > totalMs / 2),
        'audioFrames',
      ),
    ).toBeLessThanOrEqual(most(early, 'audioFrames') * 1.2);
    // And the words land where they are said, as well as one alignment of the whole does.
    expect(result.exact).toBeGreaterThan(0.75);
    expect(result.closures / result.closuresOf).toBeGreaterThan(0.8);
    // Up to the words' end (the speech ends with a pause the words do not have).
    expect(last!.coveredMs).toBeGreaterThan(
      speech.phonemes[speech.phonemes.length - 1]!.endMs - 100,
    );
  }, 60_000);
});
