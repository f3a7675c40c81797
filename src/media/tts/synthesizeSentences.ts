// SPDX-License-Identifier: GPL-3.0-or-later
import type { EspeakEngine } from './espeakEngine.js';
import { isSilent, pauseAfter, phraseChunk } from './espeakPhrasing.js';
import type { EspeakEvent } from './espeakRuntime.js';
import { espeakTimings } from './espeakTimings.js';
import type { EspeakVoiceProfile } from './espeakVoiceProfile.js';
import {
  splitClauses,
  splitSentences,
  type SentenceChunk,
  type SplitSentencesOptions,
} from './splitSentences.js';
import type { SynthesisOptions, SynthesisResult, WordTiming } from './ttsEngine.js';

/** About 5 s of speech: a long first sentence is cut at a clause so speech starts sooner. */
const FIRST_CHUNK_MAX_CHARS = 100;

/**
 * A piece of one synthesized sentence. Timings are relative to this piece's first sample (the
 * last piece of a streamed sentence carries the phonemes of all of it, and words the earlier
 * pieces did not, so they may start before it); word offsets are already shifted into the full
 * text.
 */
export interface SentenceSynthesis extends SynthesisResult {
  index: number;
  chunk: SentenceChunk;
  /** The sentence's last piece (the only one, except for a streamed first sentence). */
  last: boolean;
}

/**
 * Synthesize long text chunk by chunk (its sentences, each cut into its clauses), one chunk ahead
 * of the consumer: while the caller plays chunk N, chunk N+1 is already being synthesized, so
 * playback never waits on synthesis (espeak runs ~100x real time).
 *
 * The first chunk streams: its audio comes in the pieces espeak-ng produces (100 ms each, the
 * first one a few ms after the start instead of the 20-50 ms the whole chunk takes), each with
 * the words that start in it; its phoneme timings come with its last piece. Later chunks are
 * ready before they are needed, whole.
 *
 * Every pause is chosen here, between chunks: like a person's (espeakPhrasing.ts). Word
 * `charStart`/`charEnd` refer to the full `text`. Stop iterating (or abort the signal) on an
 * interrupt; the look-ahead synthesis is then discarded.
 */
export async function* synthesizeSentences(
  engine: EspeakEngine,
  text: string,
  voice: EspeakVoiceProfile,
  opts: SynthesisOptions & SplitSentencesOptions = {},
): AsyncGenerator<SentenceSynthesis> {
  const chunks = splitClauses(
    splitSentences(text, { firstMaxChars: FIRST_CHUNK_MAX_CHARS, ...opts }),
    text,
  );
  const pauseAfterMs = (index: number): number | null =>
    index === chunks.length - 1 ? null : pauseAfter(chunks[index]!, text);
  const start = (index: number): Promise<SentenceSynthesis> | undefined => {
    const chunk = chunks[index];
    if (!chunk) return undefined;
    return engine.synthesize(chunk.text, voice, { signal: opts.signal }).then((raw) => {
      const result = phraseChunk(raw, { first: index === 0, pauseAfterMs: pauseAfterMs(index) });
      return inText(result, chunk, index);
    });
  };
  const first = chunks[0];
  if (!first) return;
  const streamed = streamFirstSentence(engine, first, voice, pauseAfterMs(0), opts.signal);
  let pending = start(1);
  pending?.catch(() => undefined);
  yield* streamed;
  for (let index = 1; pending; index++) {
    const current = pending;
    pending = start(index + 1);
    // A look-ahead that fails after the consumer stopped must not become an unhandled rejection.
    pending?.catch(() => undefined);
    yield await current;
  }
}

function inText(result: SynthesisResult, chunk: SentenceChunk, index: number): SentenceSynthesis {
  return {
    ...result,
    words: result.words.map((w) => inTextWord(w, chunk)),
    index,
    chunk,
    last: true,
  };
}

/**
 * The first sentence as espeak-ng produces it: each piece of audio is passed on up to its last
 * sound (silence is held back, because the sentence's trailing silence becomes the phrased pause)
 * with the words that start in it, and the last piece, once the whole sentence is synthesized,
 * brings the rest of the audio, the pause, the words not passed on yet and every phoneme timing.
 * The words travel with their audio because the rest of the sentence can take longer to
 * synthesize than its first words take to play: on a busy machine an interrupt a second into the
 * reply found no word timed yet, and its final said nothing had been heard. On the inline thread
 * there are no pieces: one result, as for the others.
 *
 * The synthesis starts at the call, not at the first `next()`: the look-ahead of the next chunk,
 * asked for right after, then waits behind this one on the synthesis thread, not in front of it.
 */
function streamFirstSentence(
  engine: EspeakEngine,
  chunk: SentenceChunk,
  voice: EspeakVoiceProfile,
  pauseAfterMs: number | null,
  signal: AbortSignal | undefined,
): AsyncGenerator<SentenceSynthesis> {
  const parts: Float32Array[] = [];
  /** All the audio so far and its events, for the timings of the words already synthesized. */
  const synthesized: Float32Array[] = [];
  const events: EspeakEvent[] = [];
  let sampleRate = 0;
  let wake: (() => void) | undefined;
  let settled = false;
  const whole = engine.synthesize(chunk.text, voice, {
    signal,
    onAudio: (pcm, rate, partEvents) => {
      sampleRate = rate;
      parts.push(pcm);
      synthesized.push(pcm);
      events.push(...partEvents);
      wake?.();
    },
  });
  void whole
    .catch(() => undefined)
    .finally(() => {
      settled = true;
      wake?.();
    });
  /** The words passed on so far cover the chunk's text up to here. */
  let passedChars = 0;
  const unpassed = (words: WordTiming[]): WordTiming[] => {
    const fresh = words.filter((w) => w.charEnd > passedChars);
    for (const w of fresh) passedChars = Math.max(passedChars, w.charEnd);
    return fresh;
  };
  /** The words not passed on yet that start before sample `to`, relative to sample `from`. */
  const wordsBetween = (from: number, to: number): WordTiming[] => {
    if (!events.some((e) => e.type === 'word')) return [];
    const audio = concat(new Float32Array(0), synthesized);
    const { words } = espeakTimings(chunk.text, events, audio, sampleRate);
    const [fromMs, toMs] = [(from / sampleRate) * 1000, (to / sampleRate) * 1000];
    return unpassed(words.filter((w) => w.startMs < toMs)).map((w) => shiftWord(w, -fromMs));
  };
  return (async function* pieces(): AsyncGenerator<SentenceSynthesis> {
    let held: Float32Array = new Float32Array(0);
    let emitted = 0;
    while (!settled || parts.length > 0) {
      if (parts.length === 0) {
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
        continue;
      }
      held = concat(held, parts.splice(0));
      let sound = held.length;
      while (sound > 0 && isSilent(held[sound - 1]!)) sound--;
      if (sound === 0 || settled) continue;
      yield {
        sampleRate,
        pcm: held.slice(0, sound),
        words: wordsBetween(emitted, emitted + sound).map((w) => inTextWord(w, chunk)),
        phonemes: [],
        index: 0,
        chunk,
        last: false,
      };
      emitted += sound;
      held = held.slice(sound);
    }
    const raw = await whole;
    const phrased = phraseChunk(raw, { first: true, pauseAfterMs });
    const shiftMs = -(emitted / raw.sampleRate) * 1000;
    yield inText(
      {
        sampleRate: raw.sampleRate,
        pcm: phrased.pcm.subarray(Math.min(emitted, phrased.pcm.length)),
        words: unpassed(phrased.words).map((w) => shiftWord(w, shiftMs)),
        phonemes: phrased.phonemes.map((p) => ({
          ...p,
          startMs: p.startMs + shiftMs,
          endMs: p.endMs + shiftMs,
        })),
      },
      chunk,
      0,
    );
  })();
}

function shiftWord(w: WordTiming, ms: number): WordTiming {
  return { ...w, startMs: w.startMs + ms, endMs: w.endMs + ms };
}

/** A word of a chunk with its offsets into the full text. */
function inTextWord(w: WordTiming, chunk: SentenceChunk): WordTiming {
  return { ...w, charStart: w.charStart + chunk.start, charEnd: w.charEnd + chunk.start };
}

function concat(head: Float32Array, tail: Float32Array[]): Float32Array {
  const out = new Float32Array(head.length + tail.reduce((n, p) => n + p.length, 0));
  out.set(head);
  let at = head.length;
  for (const p of tail) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
