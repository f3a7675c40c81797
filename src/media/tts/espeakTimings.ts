// SPDX-License-Identifier: GPL-3.0-or-later
import type { EspeakEvent } from './espeakRuntime.js';
import type { PhonemeTiming, WordTiming } from './ttsEngine.js';

/**
 * Turn espeak-ng's synthesis events into word and phoneme timings.
 *
 * espeak reports only start times. Ends are taken from the next event and then pulled back over
 * trailing silence (measured on the PCM), so a word before a comma pause ends when its sound ends,
 * not when the next word starts: the mouth closes during pauses and transcripts are not early.
 * Numbers and symbols are spoken as several espeak "words" over the same characters ("3.50" ->
 * three, fifty...); those are merged into one word spanning the written text.
 */

const FRAME_MS = 5;
const SILENCE_DB = -40;

/** Per-5-ms "has sound" flags, relative to the loudest frame. */
function soundFrames(pcm: Float32Array, sampleRate: number): Uint8Array {
  const frameLength = Math.max(1, Math.round((sampleRate * FRAME_MS) / 1000));
  const frames = Math.ceil(pcm.length / frameLength);
  const energy = new Float64Array(frames);
  let peak = 0;
  for (let f = 0; f < frames; f++) {
    let sum = 0;
    const end = Math.min(pcm.length, (f + 1) * frameLength);
    for (let i = f * frameLength; i < end; i++) sum += pcm[i]! * pcm[i]!;
    energy[f] = sum / frameLength;
    if (energy[f]! > peak) peak = energy[f]!;
  }
  const threshold = peak * 10 ** (SILENCE_DB / 10);
  return Uint8Array.from(energy, (e) => (e > threshold ? 1 : 0));
}

function trimTrailingSilence(
  sound: Uint8Array,
  startMs: number,
  endMs: number,
  minMs: number,
): number {
  let end = endMs;
  while (end - FRAME_MS >= startMs + minMs) {
    const frame = Math.floor((end - FRAME_MS) / FRAME_MS);
    if (frame < sound.length && sound[frame]) break;
    end -= FRAME_MS;
  }
  return Math.max(end, Math.min(endMs, startMs + minMs));
}

/** UTF-16 index of each code-point index (espeak counts code points), plus the end. */
function codePointOffsets(text: string): number[] {
  const offsets: number[] = [];
  let i = 0;
  for (const ch of text) {
    offsets.push(i);
    i += ch.length;
  }
  offsets.push(i);
  return offsets;
}

const LEADING_JUNK = /[\s"'“‘(«[]/u;
const TRAILING_JUNK = /[\s.,!?;:…"'”’)»\]]/u;

export interface EspeakTimings {
  words: WordTiming[];
  phonemes: PhonemeTiming[];
}

export function espeakTimings(
  text: string,
  events: readonly EspeakEvent[],
  pcm: Float32Array,
  sampleRate: number,
): EspeakTimings {
  const totalMs = (pcm.length / sampleRate) * 1000;
  const sound = soundFrames(pcm, sampleRate);
  const offsets = codePointOffsets(text);
  const cpCount = offsets.length - 1;
  const at = (ms: number) => Math.min(totalMs, Math.max(0, ms));

  // Words: merge events that start inside the previous word's characters.
  const rawWords: { cpStart: number; cpEnd: number; startMs: number; endMs: number }[] = [];
  events.forEach((event, index) => {
    if (event.type !== 'word') return;
    const cpStart = Math.min(cpCount, Math.max(0, event.text_position - 1));
    const cpEnd = Math.min(cpCount, cpStart + Math.max(0, event.word_length));
    // End: the next word start, clause end or sentence start after this word.
    let endMs = totalMs;
    for (let k = index + 1; k < events.length; k++) {
      const next = events[k]!;
      if (next.type === 'word' || next.type === 'end' || next.type === 'sentence') {
        if (next.audio_position > event.audio_position) {
          endMs = next.audio_position;
          break;
        }
      }
    }
    const last = rawWords[rawWords.length - 1];
    if (last && cpStart < last.cpEnd) {
      last.cpEnd = Math.max(last.cpEnd, cpEnd);
      last.endMs = Math.max(last.endMs, endMs);
      return;
    }
    rawWords.push({ cpStart, cpEnd, startMs: event.audio_position, endMs });
  });

  // espeak's word lengths are unreliable around apostrophes, digit groups, hyphens and long
  // words ("It's" -> 2, "1,000,000" -> 2, 31 characters at most): each word spans its whole
  // written token (letters, digits, marks, and inner punctuation followed by one of those), and
  // later espeak words that start inside that token are merged into it.
  const TOKEN = /[\p{L}\p{N}\p{M}]/u;
  const INNER = /[,.'’\-_:/@]/u;
  const tokenEnd = (from: number): number => {
    let end = from;
    while (end < text.length) {
      if (TOKEN.test(text[end]!)) end++;
      else if (INNER.test(text[end]!) && end + 1 < text.length && TOKEN.test(text[end + 1]!)) {
        end += 2;
      } else break;
    }
    return end;
  };
  const spans: { charStart: number; charEnd: number; startMs: number; endMs: number }[] = [];
  for (const w of rawWords) {
    const charStart = offsets[w.cpStart]!;
    const last = spans[spans.length - 1];
    if (last && charStart < last.charEnd) {
      last.charEnd = Math.max(last.charEnd, tokenEnd(offsets[w.cpEnd]!));
      last.endMs = Math.max(last.endMs, w.endMs);
      continue;
    }
    spans.push({
      charStart,
      charEnd: tokenEnd(offsets[w.cpEnd]!),
      startMs: w.startMs,
      endMs: w.endMs,
    });
  }
  const words: WordTiming[] = [];
  for (const span of spans) {
    let { charStart, charEnd } = span;
    while (charEnd > charStart + 1 && TRAILING_JUNK.test(text[charEnd - 1]!)) charEnd--;
    while (charStart < charEnd - 1 && LEADING_JUNK.test(text[charStart]!)) charStart++;
    const wordText = text.slice(charStart, charEnd);
    if (wordText.trim() === '') continue;
    const startMs = at(span.startMs);
    words.push({
      text: wordText,
      startMs,
      endMs: trimTrailingSilence(sound, startMs, at(span.endMs), 20),
      charStart,
      charEnd,
    });
  }

  // Phonemes: an empty phoneme id is espeak's pause marker; it bounds the phoneme before it.
  const phonemes: PhonemeTiming[] = [];
  events.forEach((event, index) => {
    if (event.type !== 'phoneme' || typeof event.id !== 'string' || event.id === '') return;
    let endMs = totalMs;
    for (let k = index + 1; k < events.length; k++) {
      const next = events[k]!;
      if (
        (next.type === 'phoneme' || next.type === 'end' || next.type === 'word') &&
        next.audio_position > event.audio_position
      ) {
        endMs = next.audio_position;
        break;
      }
    }
    const ipa = event.id.replace(/[ˈˌ]/gu, '');
    if (ipa === '') return;
    const startMs = at(event.audio_position);
    phonemes.push({
      ipa,
      startMs,
      endMs: trimTrailingSilence(sound, startMs, at(endMs), 10),
      stressed: ipa !== event.id,
    });
  });
  return { words, phonemes };
}
