// SPDX-License-Identifier: GPL-3.0-or-later
import type { SentenceChunk } from './splitSentences.js';
import type { SynthesisResult } from './ttsEngine.js';

/**
 * Natural pauses between the chunks espeak-ng speaks one by one (each clause of each sentence).
 * Synthesized separately, chunks lose the pauses espeak puts between sentences of one input:
 * measured on a three-sentence reply, 40 and 150 ms between sentences against 300 and 290 ms from
 * plain espeak-ng on the whole text, and 150-180 ms at its commas. People reading aloud pause
 * longer: 400-700 ms between sentences in read speech; a real speaker's clip
 * (test/fixtures/audio) pauses 1100 and 500 ms at its clause boundaries, at an orator's pace
 * (his speech spans 10.3 s where plain espeak-ng's spans 6.2 s for the same words). Each chunk's
 * own edge silence is trimmed and replaced by a pause chosen by how the chunk ends.
 */
export const PAUSE_MS = {
  /** After `.`, `!`, `?` or `…` (closing quotes and brackets allowed). */
  sentence: 420,
  /** Before a paragraph break (a blank line). */
  paragraph: 650,
  /**
   * After a clause (`,` `;` `:` or a dash): the speaker's shorter clause pause at espeak-ng's
   * pace (500 ms x 6.2 / 10.3 = 300 ms). espeak-ng's own 150-170 ms ran the clauses together.
   */
  clause: 300,
  /** After a chunk cut between words (a very long clause). */
  word: 60,
};

/** Amplitude below which a sample counts as silence (-40 dBFS). */
const SILENCE = 0.01;
/** Silence kept at a trimmed edge so the speech does not start or stop abruptly. */
const EDGE_MS = 15;

export function pauseAfter(chunk: SentenceChunk, text: string): number {
  const tail = chunk.text.trimEnd();
  const between = text.slice(chunk.end, text.slice(chunk.end).search(/\S/) + chunk.end);
  if (/\n\s*\n/.test(between)) return PAUSE_MS.paragraph;
  if (/[.!?…]["'”’)\]]*$/.test(tail)) return PAUSE_MS.sentence;
  if (/[,;:—–-]["'”’)\]]*$/.test(tail)) return PAUSE_MS.clause;
  return PAUSE_MS.word;
}

/** Whether a sample is silence to the phrasing (what trimming and pauses replace). */
export function isSilent(sample: number): boolean {
  return Math.abs(sample) < SILENCE;
}

function leadingSilence(pcm: Float32Array): number {
  let i = 0;
  while (i < pcm.length && isSilent(pcm[i]!)) i++;
  return i;
}

function trailingSilence(pcm: Float32Array): number {
  let i = pcm.length;
  while (i > 0 && isSilent(pcm[i - 1]!)) i--;
  return pcm.length - i;
}

/**
 * One chunk's audio phrased for its place in the text: leading silence trimmed (except for the
 * first chunk, whose start is the speech onset), trailing silence set to the pause after it (none
 * after the last). Timings move with the trimmed start.
 */
export function phraseChunk(
  result: SynthesisResult,
  opts: { first: boolean; pauseAfterMs: number | null },
): SynthesisResult {
  const { pcm, sampleRate } = result;
  const edge = Math.round((EDGE_MS / 1000) * sampleRate);
  const lead = opts.first ? 0 : Math.max(0, leadingSilence(pcm) - edge);
  if (lead >= pcm.length) return result;
  const speechEnd = pcm.length - trailingSilence(pcm);
  const pauseSamples =
    opts.pauseAfterMs === null
      ? pcm.length - speechEnd
      : Math.round((opts.pauseAfterMs / 1000) * sampleRate);
  const out = new Float32Array(speechEnd - lead + pauseSamples);
  out.set(pcm.subarray(lead, speechEnd));
  const shiftMs = (lead / sampleRate) * 1000;
  const shift = <T extends { startMs: number; endMs: number }>(x: T): T => ({
    ...x,
    startMs: Math.max(0, x.startMs - shiftMs),
    endMs: Math.max(0, x.endMs - shiftMs),
  });
  return {
    sampleRate,
    pcm: out,
    words: result.words.map(shift),
    phonemes: result.phonemes.map(shift),
  };
}
