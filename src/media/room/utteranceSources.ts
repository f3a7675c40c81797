// SPDX-License-Identifier: GPL-3.0-or-later
import { StreamingResampler } from '../audio/index.js';
import type { SpeechChannel } from '../tts/index.js';
import type { Logger } from 'pino';
import { OUTPUT_RATE, type AudioChunk, type Utterance } from './utterance.js';
import { WordsAlignment, type LiveTranscript, type SpeakWords } from './wordsAlignment.js';

/** How a supplied audio's words shape the mouth: spoken by `speak`, then aligned to the audio. */
export interface WordsShaping {
  readonly speak: SpeakWords;
  readonly log: Logger;
}

/** Hands the whole clip to `alignment` a second at a time, between turns of the event loop. */
async function pushClip(
  alignment: WordsAlignment,
  pcm: Float32Array,
  sampleRate: number,
  signal: AbortSignal,
): Promise<void> {
  for (let i = 0; i < pcm.length && !signal.aborted; i += sampleRate) {
    alignment.pushAudio(pcm.subarray(i, i + sampleRate), sampleRate, false);
    await new Promise((resolve) => setImmediate(resolve));
  }
  alignment.endAudio();
}

/**
 * The most audio (100 ms at `rate`) the player is handed at once. A whole sentence or clip
 * resampled and mouth-tracked in one go held the media process's event loop for 50 to 200 ms,
 * and every avatar in that process skipped frames; in pieces, the player's waits for the
 * AudioSource come between them, and an interrupt never waits behind a long clip.
 */
const pieceSamples = (rate: number) => Math.max(1, Math.round(rate / 10));

/** Text spoken by the session's TTS channel, played as the engine streams it. */
export function speechUtterance(id: string, text: string, speech: SpeechChannel): Utterance {
  return {
    id,
    text,
    mouth: 'timings',
    async *chunks(signal) {
      // One resampler per utterance: provider chunks split the audio anywhere.
      let resampler: StreamingResampler | undefined;
      let rate = 0;
      for await (const chunk of speech.speak(text, signal)) {
        if (signal.aborted) return;
        if (chunk.sampleRate !== OUTPUT_RATE && chunk.sampleRate !== rate) {
          const tail = resampler?.flush();
          if (tail && tail.length > 0) yield { pcm: tail };
          resampler = new StreamingResampler(chunk.sampleRate, OUTPUT_RATE);
          rate = chunk.sampleRate;
        }
        // An engine may hand over a whole sentence at once (seconds of audio). The timings stay
        // on the first piece: they are relative to the chunk's start, which is that piece's (a
        // chunk of timings alone still comes).
        const piece = pieceSamples(chunk.sampleRate);
        for (let i = 0; i === 0 || i < chunk.pcm.length; i += piece) {
          if (i > 0 && signal.aborted) return;
          const pcm = chunk.pcm.subarray(i, i + piece);
          yield {
            pcm: chunk.sampleRate === OUTPUT_RATE ? pcm : resampler!.push(pcm),
            ...(i === 0 ? { words: chunk.words, phonemes: chunk.phonemes } : {}),
          };
        }
      }
      const tail = resampler?.flush();
      if (tail && tail.length > 0 && !signal.aborted) yield { pcm: tail };
    },
  };
}

/**
 * Decoded audio from the HTTP API; the mouth follows the audio itself, and is shaped by its words
 * where they are given (`text`) and `shaping` is.
 */
export function audioUtterance(
  id: string,
  pcm: Float32Array,
  sampleRate: number,
  text: string | null,
  shaping?: WordsShaping,
): Utterance {
  return {
    id,
    text,
    mouth: 'audio',
    ...(text !== null && text.trim() !== '' && shaping
      ? {
          words: (place, signal) => {
            const alignment = new WordsAlignment(shaping.speak, place, shaping.log);
            signal.addEventListener('abort', () => alignment.close(), { once: true });
            alignment.setText(text, true);
            void pushClip(alignment, pcm, sampleRate, signal);
          },
        }
      : {}),
    async *chunks(signal) {
      // Resampled piece by piece as it is played, not the whole clip (up to minutes) at once.
      const resampler =
        sampleRate === OUTPUT_RATE ? null : new StreamingResampler(sampleRate, OUTPUT_RATE);
      const step = pieceSamples(sampleRate);
      for (let i = 0; i < pcm.length; i += step) {
        if (signal.aborted) return;
        const piece = pcm.subarray(i, i + step);
        const out = resampler ? resampler.push(piece) : piece;
        if (out.length > 0) yield { pcm: out };
      }
      const tail = resampler?.flush();
      if (tail && tail.length > 0 && !signal.aborted) yield { pcm: tail };
    },
  };
}

/**
 * PCM arriving as a stream (the LiveKit avatar protocol's byte stream). With `words` (the
 * agent's transcript of it, as it arrives) and `shaping`, the stream is read as fast as it comes,
 * ahead of playout, so that the words can be aligned to audio before it is heard.
 */
export function streamedUtterance(
  id: string,
  source: AsyncIterable<Float32Array>,
  sampleRate: number,
  hooks: Pick<Utterance, 'onStarted' | 'onFinished'>,
  words?: { transcript: LiveTranscript; shaping: WordsShaping },
): Utterance {
  let alignment: WordsAlignment | undefined;
  return {
    id,
    text: null,
    mouth: 'audio',
    ...hooks,
    ...(words
      ? {
          words: (place, signal) => {
            const a = new WordsAlignment(words.shaping.speak, place, words.shaping.log);
            const { transcript } = words;
            const unsubscribe = transcript.subscribe(() =>
              a.setText(transcript.text, transcript.final),
            );
            a.setText(transcript.text, transcript.final);
            signal.addEventListener(
              'abort',
              () => {
                unsubscribe();
                a.close();
              },
              { once: true },
            );
            alignment = a;
          },
        }
      : {}),
    async *chunks(signal): AsyncIterable<AudioChunk> {
      // One resampler for the whole stream: resampling chunk by chunk would click at every edge.
      const resampler =
        sampleRate === OUTPUT_RATE ? null : new StreamingResampler(sampleRate, OUTPUT_RATE);
      const pieces = alignment ? readAhead(source, signal, alignment, sampleRate) : source;
      for await (const pcm of pieces) {
        if (signal.aborted) return;
        const out = resampler ? resampler.push(pcm) : pcm;
        if (out.length > 0) yield { pcm: out };
      }
      const tail = resampler?.flush();
      if (tail && tail.length > 0 && !signal.aborted) yield { pcm: tail };
    },
  };
}

/**
 * Reads `source` as fast as it comes, handing each piece to `alignment` at once, and yields the
 * pieces as they are asked for (at playout's pace).
 */
async function* readAhead(
  source: AsyncIterable<Float32Array>,
  signal: AbortSignal,
  alignment: WordsAlignment,
  sampleRate: number,
): AsyncIterable<Float32Array> {
  const queue: Float32Array[] = [];
  let ended = false;
  let failed: unknown;
  let wake: (() => void) | undefined;
  const onAbort = () => wake?.();
  signal.addEventListener('abort', onAbort, { once: true });
  const pump = (async () => {
    try {
      for await (const pcm of source) {
        if (signal.aborted) break;
        alignment.pushAudio(pcm, sampleRate);
        queue.push(pcm);
        wake?.();
      }
      alignment.endAudio();
    } catch (err) {
      failed = err;
    } finally {
      ended = true;
      wake?.();
    }
  })();
  while (!signal.aborted) {
    const next = queue.shift();
    if (next) {
      yield next;
      continue;
    }
    if (ended) break;
    await new Promise<void>((resolve) => (wake = resolve));
    wake = undefined;
  }
  signal.removeEventListener('abort', onAbort);
  if (failed !== undefined) throw failed;
  void pump;
}
