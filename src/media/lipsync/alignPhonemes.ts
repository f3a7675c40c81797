// SPDX-License-Identifier: GPL-3.0-or-later
import { FEATURE_DIMS, FEATURE_HOP_MS } from './speechFeatures.js';
import type { PhonemeTiming } from './visemeTimeline.js';

export interface PhonemeAlignmentInput {
  /** `SpeechFeatures` frames of speech synthesized from the words, whose phonemes are known. */
  readonly template: Float32Array;
  /** The template's phonemes, in ms from its first sample. */
  readonly phonemes: readonly PhonemeTiming[];
  /** `SpeechFeatures` frames of the audio actually played (the same words, another voice). */
  readonly audio: Float32Array;
  /**
   * Either side may stop short of the other: the audio is still arriving (it says the start of
   * the words), or the words are (the audio goes on past them). The path ends where the two fit
   * best, and `coveredMs` says how much of the audio it explains.
   */
  readonly openEnd: boolean;
}

export interface PhonemeAlignment {
  /** The template's phonemes moved onto the audio's clock (ms from its first sample). */
  readonly phonemes: PhonemeTiming[];
  /** Audio time (ms) up to which the phonemes describe the audio: the aligned part's end. */
  readonly coveredMs: number;
  /**
   * Mean distance between the frames the path matches, over the mean distance from each audio
   * frame to its nearest template frame anywhere: 1.2 to 1.5 for the same words in two voices,
   * above 2 for other words (the path is forced through frames that do not match).
   */
  readonly mismatch: number;
}

/** Above this mismatch the audio does not say the words (measured: wordsInAudioMode.test.ts). */
export const MAX_MISMATCH = 1.8;
/** Frames below the signal's peak by more than this (dB) are silence for the normalisation. */
const SPEECH_BELOW_PEAK_DB = 35;
/** Energy is the surest cue of all (pauses, stops): it counts as this many cepstra. */
const ENERGY_WEIGHT = 2;
/** Cost of holding one side still while the other moves, so the path prefers the diagonal. */
const STRETCH_PENALTY = 0.3;
/**
 * The most cells one alignment may visit: about 35 s of audio still arriving, 45 s of a whole
 * clip (some 100 ms of work; longer audio is not aligned).
 */
const MAX_CELLS = 10_000_000;

/**
 * Moves the phoneme timings of speech synthesized from the words onto audio of the same words
 * spoken by another voice, by dynamic time warping of their spectral features (mel cepstra and
 * energy, each signal normalised on its own speech frames). This is the classic way to align a
 * text to a recording with a synthesizer (as aeneas does): the two voices differ in pitch,
 * timbre and speed, but the sequence of spectral shapes, pauses and stops is the words'.
 *
 * Returns undefined where there is nothing to align, where the work would be too large, or
 * where the audio plainly does not say the words (`MAX_MISMATCH`): the caller then lets the
 * audio alone move the mouth.
 */
export function alignPhonemes(input: PhonemeAlignmentInput): PhonemeAlignment | undefined {
  const n = input.audio.length / FEATURE_DIMS;
  const m = input.template.length / FEATURE_DIMS;
  if (n < 10 || m < 10 || input.phonemes.length === 0) return undefined;
  const path = warpFeatures(
    normaliseFeatures(input.audio, n),
    normaliseFeatures(input.template, m),
    input.openEnd,
  );
  if (!path) return undefined;
  const phonemes: PhonemeTiming[] = [];
  for (const p of input.phonemes) {
    const placed = placePhoneme(path, p);
    if (placed) phonemes.push(placed);
  }
  return { phonemes, mismatch: path.mismatch, coveredMs: (path.endI + 1) * FEATURE_HOP_MS };
}

/** A warping path between audio and template frames (both normalised), from their first frames. */
export interface WarpPath {
  /** For each template frame up to `endJ`, the first audio frame matched to it. */
  readonly audioAt: Float64Array;
  /** The path's last audio frame. */
  readonly endI: number;
  /** The path's last template frame. */
  readonly endJ: number;
  /** As `PhonemeAlignment.mismatch`. */
  readonly mismatch: number;
}

/**
 * Dynamic time warping of normalised audio frames `a` against normalised template frames `t`
 * (`FEATURE_DIMS` values each), from their first frames to the end (`openEnd`: where the two fit
 * best). Undefined where the work would be too large or the audio does not say the words.
 */
export function warpFeatures(
  a: Float32Array,
  t: Float32Array,
  openEnd: boolean,
): WarpPath | undefined {
  const n = a.length / FEATURE_DIMS;
  const m = t.length / FEATURE_DIMS;
  if (n < 1 || m < 1) return undefined;
  const band = bandOf(n, m, openEnd);
  if (band.cells > MAX_CELLS) return undefined;
  // Accumulated cost, one row at a time, and the step taken into each cell for the way back.
  const steps = new Uint8Array(band.cells);
  // Cost of ending at the template's last frame, per audio frame (an open end: audio past the
  // words heard so far).
  const lastColumn = new Float64Array(n).fill(Infinity);
  let prev = new Float64Array(m).fill(Infinity);
  let cur = new Float64Array(m).fill(Infinity);
  for (let i = 0; i < n; i++) {
    const lo = band.lo[i] as number;
    const hi = band.hi[i] as number;
    const base = (band.offset[i] as number) - lo;
    // `cur` still holds row i-2: clear its band (nothing outside a row's band is ever written).
    if (i >= 2) cur.fill(Infinity, band.lo[i - 2] as number, (band.hi[i - 2] as number) + 1);
    for (let j = lo; j <= hi; j++) {
      const d = distance(a, i, t, j);
      if (i === 0 && j === 0) {
        cur[j] = d;
        continue;
      }
      const diag = i > 0 && j > 0 ? (prev[j - 1] as number) : Infinity;
      const up = i > 0 ? (prev[j] as number) + STRETCH_PENALTY : Infinity;
      const left = j > 0 ? (cur[j - 1] as number) + STRETCH_PENALTY : Infinity;
      let best = diag;
      let step = 0;
      if (up < best) {
        best = up;
        step = 1;
      }
      if (left < best) {
        best = left;
        step = 2;
      }
      cur[j] = d + best;
      steps[base + j] = step;
    }
    if (hi === m - 1) lastColumn[i] = cur[m - 1] as number;
    [prev, cur] = [cur, prev];
  }

  // The end: the last template frame, or for an open end the template frame that fits best.
  // For an open end, the audio's last frame against the template frame that fits it best, or the
  // template's last frame against the audio frame that fits it best (the audio goes on past the
  // words known so far), by mean cost per step.
  let endI = n - 1;
  let endJ = m - 1;
  let endCost = prev[m - 1] as number;
  if (openEnd) {
    let best = Infinity;
    for (let j = band.lo[n - 1] as number; j <= (band.hi[n - 1] as number); j++) {
      const score = (prev[j] as number) / (n + j);
      if (score < best) [best, endJ, endCost] = [score, j, prev[j] as number];
    }
    for (let i = 0; i < n - 1; i++) {
      const score = (lastColumn[i] as number) / (i + m);
      if (score < best) [best, endI, endJ, endCost] = [score, i, m - 1, lastColumn[i] as number];
    }
  }
  if (!Number.isFinite(endCost)) return undefined;

  // Back along the path: for each template frame, the first audio frame matched to it.
  const audioAt = new Float64Array(endJ + 1).fill(-1);
  let sum = 0;
  let length = 0;
  for (let i = endI, j = endJ; ;) {
    audioAt[j] = i;
    sum += distance(a, i, t, j);
    length++;
    if (i === 0 && j === 0) break;
    const step = steps[(band.offset[i] as number) - (band.lo[i] as number) + j];
    if (step === 0) {
      i--;
      j--;
    } else if (step === 1) i--;
    else j--;
    if (i < 0 || j < 0) break;
  }
  const mismatch = sum / length / meanNearestDistance(a, endI + 1, t, endJ + 1);
  if (!(mismatch <= MAX_MISMATCH)) return undefined;
  return { audioAt, endI, endJ, mismatch };
}

/**
 * Template phoneme `p` (ms from the template's first frame) moved along `path` onto the audio's
 * clock (ms from its first frame); undefined where the path ends before it or it has no length.
 */
export function placePhoneme(path: WarpPath, p: PhonemeTiming): PhonemeTiming | undefined {
  const { audioAt, endJ } = path;
  const endMs = (endJ + 1) * FEATURE_HOP_MS;
  if (p.startMs >= endMs) return undefined;
  const toAudioMs = (templateMs: number): number => {
    const f = Math.min(endJ, Math.max(0, templateMs / FEATURE_HOP_MS));
    const j0 = Math.floor(f);
    const j1 = Math.min(endJ, j0 + 1);
    const x0 = audioAt[j0] as number;
    const x1 = audioAt[j1] as number;
    return (x0 + (x1 - x0) * (f - j0)) * FEATURE_HOP_MS;
  };
  const startMs = toAudioMs(p.startMs);
  const end = toAudioMs(Math.min(p.endMs, endMs));
  return end > startMs ? { ...p, startMs, endMs: end } : undefined;
}

interface Band {
  lo: Int32Array;
  hi: Int32Array;
  /** Index of each row's first cell in the flat step array. */
  offset: Int32Array;
  cells: number;
}

/**
 * Which template frames each audio frame may match: around the diagonal for a closed end, a cone
 * of speaking rates (the audio at half to twice the template's speed) for an open one.
 */
function bandOf(n: number, m: number, openEnd: boolean): Band {
  const lo = new Int32Array(n);
  const hi = new Int32Array(n);
  const offset = new Int32Array(n);
  const width = Math.max(100, Math.round(0.25 * Math.max(n, m)));
  let cells = 0;
  for (let i = 0; i < n; i++) {
    let l: number;
    let h: number;
    if (openEnd) {
      l = Math.floor(0.5 * i) - 100;
      h = Math.ceil(2 * i) + 100;
    } else {
      const c = (i * (m - 1)) / Math.max(1, n - 1);
      l = Math.floor(c) - width;
      h = Math.ceil(c) + width;
    }
    lo[i] = Math.max(0, Math.min(m - 1, l));
    hi[i] = Math.max(lo[i] as number, Math.min(m - 1, h));
    offset[i] = cells;
    cells += (hi[i] as number) - (lo[i] as number) + 1;
  }
  return { lo, hi, offset, cells };
}

/** What normalises a signal's frames: its peak energy and its cepstra's mean and spread. */
export interface FeatureNorm {
  readonly peak: number;
  readonly mean: Float64Array;
  readonly sd: Float64Array;
}

/** `FeatureNorm` of the first `count` frames, measured on their speech frames. */
export function featureNorm(frames: Float32Array, count: number): FeatureNorm {
  const e = FEATURE_DIMS - 1;
  let peak = -Infinity;
  for (let i = 0; i < count; i++) peak = Math.max(peak, frames[i * FEATURE_DIMS + e] as number);
  const mean = new Float64Array(e);
  const sd = new Float64Array(e);
  let speech = 0;
  for (let i = 0; i < count; i++) {
    if ((frames[i * FEATURE_DIMS + e] as number) <= peak - SPEECH_BELOW_PEAK_DB) continue;
    speech++;
    for (let d = 0; d < e; d++)
      mean[d] = (mean[d] as number) + (frames[i * FEATURE_DIMS + d] as number);
  }
  for (let d = 0; d < e; d++) mean[d] = (mean[d] as number) / Math.max(1, speech);
  for (let i = 0; i < count; i++) {
    if ((frames[i * FEATURE_DIMS + e] as number) <= peak - SPEECH_BELOW_PEAK_DB) continue;
    for (let d = 0; d < e; d++) {
      sd[d] =
        (sd[d] as number) + ((frames[i * FEATURE_DIMS + d] as number) - (mean[d] as number)) ** 2;
    }
  }
  for (let d = 0; d < e; d++) sd[d] = Math.sqrt((sd[d] as number) / Math.max(1, speech)) || 1;
  return { peak, mean, sd };
}

/**
 * Frames normalised by `norm`: each cepstrum centred and scaled (cepstral mean and variance
 * normalisation: removes the voice's and the channel's constant colouring), energy in dB under
 * the peak, floored at silence.
 */
export function applyFeatureNorm(frames: Float32Array, norm: FeatureNorm): Float32Array {
  const e = FEATURE_DIMS - 1;
  const count = frames.length / FEATURE_DIMS;
  const out = new Float32Array(count * FEATURE_DIMS);
  for (let i = 0; i < count; i++) {
    const x = i * FEATURE_DIMS;
    for (let d = 0; d < e; d++) {
      out[x + d] = ((frames[x + d] as number) - (norm.mean[d] as number)) / (norm.sd[d] as number);
    }
    const db = Math.max(-SPEECH_BELOW_PEAK_DB - 10, (frames[x + e] as number) - norm.peak);
    // About one unit per 10 dB, like a normalised cepstrum's spread.
    out[x + e] = (db / 10) * Math.sqrt(ENERGY_WEIGHT);
  }
  return out;
}

/** The first `count` frames normalised on their own speech frames. */
export function normaliseFeatures(frames: Float32Array, count: number): Float32Array {
  return applyFeatureNorm(frames.subarray(0, count * FEATURE_DIMS), featureNorm(frames, count));
}

function distance(a: Float32Array, i: number, b: Float32Array, j: number): number {
  let s = 0;
  const x = i * FEATURE_DIMS;
  const y = j * FEATURE_DIMS;
  for (let d = 0; d < FEATURE_DIMS; d++) s += ((a[x + d] as number) - (b[y + d] as number)) ** 2;
  return Math.sqrt(s);
}

/**
 * How close the audio's frames come to the template's at best, wherever they are (a sample of
 * at most 100 audio frames): what a path through the same words could reach.
 */
function meanNearestDistance(a: Float32Array, n: number, b: Float32Array, m: number): number {
  const stride = Math.max(1, Math.ceil(n / 100));
  let sum = 0;
  let count = 0;
  for (let i = 0; i < n; i += stride) {
    let nearest = Infinity;
    for (let j = 0; j < m; j++) nearest = Math.min(nearest, distance(a, i, b, j));
    sum += nearest;
    count++;
  }
  return sum / count || 1;
}
