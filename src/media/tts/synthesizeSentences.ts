import type { EspeakEngine } from './espeakEngine.js';
import { pauseAfter, phraseChunk } from './espeakPhrasing.js';
import type { EspeakVoiceProfile } from './espeakVoiceProfile.js';
import {
  splitSentences,
  type SentenceChunk,
  type SplitSentencesOptions,
} from './splitSentences.js';
import type { SynthesisOptions, SynthesisResult } from './ttsEngine.js';

/** About 5 s of speech: a long first sentence is cut at a clause so speech starts sooner. */
const FIRST_CHUNK_MAX_CHARS = 100;

/** One synthesized sentence; word offsets are already shifted into the full text. */
export interface SentenceSynthesis extends SynthesisResult {
  index: number;
  chunk: SentenceChunk;
}

/**
 * Synthesize long text sentence by sentence, one sentence ahead of the consumer: while the
 * caller plays sentence N, sentence N+1 is already being synthesized, so the first audio is ready
 * after one sentence and playback never waits on synthesis (espeak runs ~100x real time).
 *
 * Between chunks it pauses like a person (espeakPhrasing.ts). Word `charStart`/`charEnd` refer
 * to the full `text`. Stop iterating (or abort the signal) on an
 * interrupt; the look-ahead synthesis is then discarded.
 */
export async function* synthesizeSentences(
  engine: EspeakEngine,
  text: string,
  voice: EspeakVoiceProfile,
  opts: SynthesisOptions & SplitSentencesOptions = {},
): AsyncGenerator<SentenceSynthesis> {
  const chunks = splitSentences(text, { firstMaxChars: FIRST_CHUNK_MAX_CHARS, ...opts });
  const start = (index: number): Promise<SentenceSynthesis> | undefined => {
    const chunk = chunks[index];
    if (!chunk) return undefined;
    return engine.synthesize(chunk.text, voice, { signal: opts.signal }).then((raw) => {
      const result = phraseChunk(raw, {
        first: index === 0,
        pauseAfterMs: index === chunks.length - 1 ? null : pauseAfter(chunk, text),
      });
      return {
        ...result,
        words: result.words.map((w) => ({
          ...w,
          charStart: w.charStart + chunk.start,
          charEnd: w.charEnd + chunk.start,
        })),
        index,
        chunk,
      };
    });
  };
  let pending = start(0);
  for (let index = 0; pending; index++) {
    const current = pending;
    pending = start(index + 1);
    // A look-ahead that fails after the consumer stopped must not become an unhandled rejection.
    pending?.catch(() => undefined);
    yield await current;
  }
}
