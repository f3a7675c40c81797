// SPDX-License-Identifier: GPL-3.0-or-later
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { resample } from '../../../src/media/audio/index.js';
import type { PhonemeTiming } from '../../../src/media/lipsync/index.js';
import type { AudioSink } from '../../../src/media/room/audioSink.js';
import { PlayoutClock } from '../../../src/media/room/playoutClock.js';
import { ReplyTranscripts } from '../../../src/media/room/replyTranscripts.js';
import { SpeechPlayer, type PlayerEvents } from '../../../src/media/room/speechPlayer.js';
import { OUTPUT_RATE, type Utterance } from '../../../src/media/room/utterance.js';
import {
  audioUtterance,
  streamedUtterance,
  type WordsShaping,
} from '../../../src/media/room/utteranceSources.js';
import { espeakWords, LiveTranscript } from '../../../src/media/room/wordsAlignment.js';
import {
  EspeakEngine,
  stockVoiceProfile,
  stopEspeakThread,
  synthesizeWithEspeak,
  espeakRuntime,
} from '../../../src/media/tts/index.js';

/**
 * Supplied audio with its words, through the speech player as a session runs it: the words are
 * spoken by espeak-ng on its thread and aligned to the audio while it plays, and the mouth a
 * video frame gets closes for the bilabials. The audio is espeak-ng in another voice (Milo), so
 * its true phoneme timings are known.
 */
const TEXT = 'Maybe my mother bought a big blue map, but please pay me back by Monday.';
const log = pino({ level: 'silent' });
// Inline: the words spoken on this thread (a session uses the shared espeak thread, the same
// synthesis; started cold it takes seconds on a busy machine).
const shaping: WordsShaping = { speak: espeakWords(new EspeakEngine({ runsOn: 'caller' })), log };
const quietEvents: PlayerEvents = {
  started: () => undefined,
  progress: () => undefined,
  finished: () => undefined,
  speakingChanged: () => undefined,
};
/** The player's audio path latency: a frame captured at playout p shows the sound at p - 50. */
const LATENCY_MS = 50;

async function agentSpeech(): Promise<{ pcm: Float32Array; phonemes: PhonemeTiming[] }> {
  const runtime = await espeakRuntime();
  const s = synthesizeWithEspeak(
    runtime,
    TEXT,
    stockVoiceProfile('voice_Milo00000000000000000001')!.espeak,
  );
  return { pcm: resample(s.pcm, s.sampleRate, OUTPUT_RATE), phonemes: s.phonemes };
}

describe('words shape the mouth of supplied audio', () => {
  let player: SpeechPlayer | undefined;
  let nowMs = 1_000;
  const sink: AudioSink = { capture: () => Promise.resolve(), clear: () => undefined };
  afterEach(() => player?.close());
  afterAll(() => stopEspeakThread());

  /** Plays `u` (the whole audio pushed at once, the clock held), then the bilabials seen shut. */
  async function bilabialsShut(
    u: Utterance,
    phonemes: PhonemeTiming[],
    words = true,
  ): Promise<number> {
    nowMs = 1_000;
    const clock = new PlayoutClock(() => nowMs);
    player = new SpeechPlayer(sink, clock, quietEvents, log);
    player.enqueue(u);
    const bilabials = phonemes.filter((p) => /^[ˈˌ]?[pbm]/.test(p.ipa));
    const count = () => {
      let shut = 0;
      for (const p of bilabials) {
        let seen = false;
        for (let t = p.startMs - 30; t <= p.endMs && !seen; t += 10) {
          nowMs = 1_000 + t + LATENCY_MS;
          const pose = player!.mouthNow();
          seen = pose.viseme === 'MBP' || pose.openness < 0.1;
        }
        if (seen) shut++;
      }
      nowMs = 1_000;
      return shut / bilabials.length;
    };
    // The words are spoken on espeak's thread (started cold here: seconds on a busy machine)
    // and aligned as the audio comes: wait for it.
    let share = 0;
    for (let i = 0; i < (words ? 300 : 3) && share < 0.9; i++) {
      await sleep(100);
      share = count();
    }
    return share;
  }

  it(
    '/audio with its text: the lips close for m, b and p (not with the audio alone)',
    { timeout: 120_000 },
    async () => {
      const speech = await agentSpeech();
      const withText = await bilabialsShut(
        audioUtterance('u1', speech.pcm, OUTPUT_RATE, TEXT, shaping),
        speech.phonemes,
      );
      player!.close();
      const alone = await bilabialsShut(
        audioUtterance('u2', speech.pcm, OUTPUT_RATE, null, shaping),
        speech.phonemes,
      );
      console.log(
        `bilabials shut: ${(withText * 100).toFixed(0)} % with the text, ${(alone * 100).toFixed(0)} % from the audio alone`,
      );
      expect(withText).toBeGreaterThan(0.9);
      expect(alone).toBeLessThan(0.6);
    },
  );

  it(
    'an agent stream with its transcript coming after the audio starts',
    { timeout: 60_000 },
    async () => {
      const speech = await agentSpeech();
      const transcript = new LiveTranscript();
      // The agent's TTS at 24 kHz, in 100 ms pieces, faster than real time.
      const pcm24 = resample(speech.pcm, OUTPUT_RATE, 24_000);
      async function* source() {
        for (let i = 0; i < pcm24.length; i += 2400) {
          yield pcm24.subarray(i, i + 2400);
          await sleep(2);
        }
      }
      const u = streamedUtterance('s1', source(), 24_000, {}, { transcript, shaping });
      // The words arrive in pieces once the audio is flowing (agents-js publishes them as heard).
      setTimeout(() => transcript.set(TEXT.slice(0, 40), false), 30);
      setTimeout(() => transcript.set(TEXT, true), 80);
      const share = await bilabialsShut(u, speech.phonemes);
      console.log(`agent stream: bilabials shut ${(share * 100).toFixed(0)} %`);
      expect(share).toBeGreaterThan(0.9);
    },
  );

  it('pairs reply transcripts with audio streams in order, whichever comes first', () => {
    const replies = new ReplyTranscripts();
    // Text first (transcription not synchronized): the next stream takes it.
    replies.segment('SG_1', 'TS_1', 'Hello there.', true);
    const first = replies.claim();
    expect(first.text).toBe('Hello there.');
    expect(first.final).toBe(true);
    // Audio first: its words come later, delta by delta on one stream, then the rest on another.
    const second = replies.claim();
    expect(second.text).toBe('');
    replies.segment('SG_2', 'TS_2', 'Maybe my', false);
    replies.segment('SG_2', 'TS_2', 'Maybe my mother', false);
    replies.segment('SG_2', 'TS_3', ' bought a map.', true);
    expect(second.text).toBe('Maybe my mother bought a map.');
    expect(second.final).toBe(true);
    // A non-delta sender repeats the whole text in each new stream.
    const third = replies.claim();
    replies.segment('SG_3', 'TS_4', 'Please', false);
    replies.segment('SG_3', 'TS_5', 'Please pay me.', true);
    expect(third.text).toBe('Please pay me.');
    // A stream that played out with no words does not take the next reply's.
    const silent = replies.claim();
    replies.release(silent);
    const next = replies.claim();
    replies.segment('SG_5', 'TS_7', 'Next reply.', true);
    expect(silent.text).toBe('');
    expect(next.text).toBe('Next reply.');
    // After an interrupt, words not yet paired are dropped.
    replies.segment('SG_4', 'TS_6', 'Never spoken.', true);
    replies.clear();
    expect(replies.claim().text).toBe('');
  });
});
