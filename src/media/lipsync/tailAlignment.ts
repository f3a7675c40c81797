// SPDX-License-Identifier: GPL-3.0-or-later
import {
  applyFeatureNorm,
  normaliseFeatures,
  placePhoneme,
  warpFeatures,
  type FeatureNorm,
} from './alignPhonemes.js';
import { FEATURE_DIMS, FEATURE_HOP_MS } from './speechFeatures.js';
import type { PhonemeTiming } from './visemeTimeline.js';

/**
 * The newest audio an open-ended alignment places is the least sure (what follows may move its
 * end): the phonemes that start at least this far (frames) before the aligned part's end are
 * settled and the next alignment starts from there.
 */
const SETTLE_BEHIND_FRAMES = 50;
/** A tail shorter than this (frames) is not aligned. */
const MIN_TAIL_FRAMES = 10;
/** An open-ended alignment reads the template this far (frames) past twice the tail's length. */
const TEMPLATE_SLACK_FRAMES = 100;
/** Frames below the audio's peak by more than this (dB) are silence (as `alignPhonemes`). */
const SPEECH_BELOW_PEAK_DB = 35;

export interface TailAlignmentResult {
  /** All the words' phonemes placed so far, on the audio's clock (ms from its first frame). */
  readonly phonemes: PhonemeTiming[];
  /** Audio time (ms) up to which the phonemes describe the audio. */
  readonly coveredMs: number;
  readonly mismatch: number;
  /** Audio frames this alignment warped (the tail from the last anchor). */
  readonly audioFrames: number;
  /** Template frames this alignment warped against. */
  readonly templateFrames: number;
}

/**
 * Aligns the words to audio that is still arriving, one tail at a time: each alignment warps
 * only the audio from the last anchor (a phoneme settled by an earlier alignment, some 500 ms
 * behind its end) against the rest of the template from that phoneme, so its cost is bounded by
 * the audio that came since, not by the utterance. The phonemes before the anchor stay where
 * they were placed. The audio is normalised with its statistics so far (`RunningNorm`), the
 * template once, whole (`alignPhonemes`' normalisation).
 */
export class TailAlignment {
  private template: { frames: Float32Array; phonemes: readonly PhonemeTiming[] } | undefined;
  private readonly norm = new RunningNorm();
  /** Phonemes before the anchor, on the audio's clock. */
  private settled: PhonemeTiming[] = [];
  /** The next alignment starts with template phoneme `index` at audio frame `audioFrame`. */
  private anchor = { index: 0, audioFrame: 0, templateFrame: 0 };
  /** The last alignment reached the template's end: only more words can place more. */
  private usedAllWords = false;

  /**
   * The words (synthesized), whole: their `SpeechFeatures` frames and phonemes. Words that grew
   * keep the anchor where the phonemes up to it are the same; other words start again from the
   * audio's start.
   */
  setTemplate(frames: Float32Array, phonemes: readonly PhonemeTiming[]): void {
    const old = this.template?.phonemes;
    const k = this.anchor.index;
    const same =
      old !== undefined &&
      k < phonemes.length &&
      old.slice(0, k + 1).every((p, i) => p.ipa === phonemes[i]?.ipa);
    this.template = {
      frames: normaliseFeatures(frames, frames.length / FEATURE_DIMS),
      phonemes,
    };
    this.usedAllWords = false;
    if (same) {
      const at = phonemes[k] as PhonemeTiming;
      this.anchor = { ...this.anchor, templateFrame: Math.floor(at.startMs / FEATURE_HOP_MS) };
    } else {
      this.settled = [];
      this.anchor = { index: 0, audioFrame: 0, templateFrame: 0 };
    }
  }

  /** Whether `align` could place more than it did (false while the audio is past the words). */
  get wantsMore(): boolean {
    return this.template !== undefined && !this.usedAllWords;
  }

  /**
   * Aligns the audio's tail (`audio`: all its `SpeechFeatures` frames so far). `openEnd` while
   * either the audio or the words may go on; closed, the rest of the words end with the audio.
   * Undefined where there is nothing to align or the tail does not fit the words.
   */
  align(audio: Float32Array, openEnd: boolean): TailAlignmentResult | undefined {
    const template = this.template;
    if (!template) return undefined;
    const n = audio.length / FEATURE_DIMS;
    this.norm.add(audio);
    const { index, audioFrame: i0, templateFrame: j0 } = this.anchor;
    const rows = n - i0;
    const m = template.frames.length / FEATURE_DIMS;
    if (rows < MIN_TAIL_FRAMES || m - j0 < MIN_TAIL_FRAMES) return undefined;
    const jEnd = openEnd ? Math.min(m, j0 + 2 * rows + TEMPLATE_SLACK_FRAMES) : m;
    const a = applyFeatureNorm(audio.subarray(i0 * FEATURE_DIMS), this.norm.value());
    const t = template.frames.subarray(j0 * FEATURE_DIMS, jEnd * FEATURE_DIMS);
    // A short last tail may not fit end to end (a pause after the words that the template does
    // not have): the end where the two fit best then.
    const path = warpFeatures(a, t, openEnd) ?? (openEnd ? undefined : warpFeatures(a, t, true));
    if (!path) return undefined;

    // The rest of the words from the anchor, moved along the path; each kept with its index.
    const shiftT = j0 * FEATURE_HOP_MS;
    const shiftA = i0 * FEATURE_HOP_MS;
    const placed: { index: number; timing: PhonemeTiming }[] = [];
    for (let k = index; k < template.phonemes.length; k++) {
      const p = template.phonemes[k] as PhonemeTiming;
      const moved = placePhoneme(path, {
        ...p,
        startMs: p.startMs - shiftT,
        endMs: p.endMs - shiftT,
      });
      if (!moved) continue;
      placed.push({
        index: k,
        timing: { ...moved, startMs: moved.startMs + shiftA, endMs: moved.endMs + shiftA },
      });
    }
    const phonemes = [...this.settled, ...placed.map((p) => p.timing)];
    const coveredFrames = i0 + path.endI + 1;
    this.usedAllWords = j0 + path.endJ === m - 1 && coveredFrames < n;

    // The new anchor: the last phoneme that starts well behind the aligned part's end.
    const settleBy = (coveredFrames - SETTLE_BEHIND_FRAMES) * FEATURE_HOP_MS;
    let next = -1;
    for (let q = 1; q < placed.length; q++) {
      if ((placed[q]?.timing.startMs as number) <= settleBy) next = q;
    }
    if (next > 0) {
      const at = placed[next] as { index: number; timing: PhonemeTiming };
      const templateFrame = Math.floor(
        (template.phonemes[at.index] as PhonemeTiming).startMs / FEATURE_HOP_MS,
      );
      const audioFrame = i0 + (path.audioAt[templateFrame - j0] as number);
      // Nor near the words' end: the audio may go on past them, and the last alignment (closed)
      // needs some of them to warp.
      if (templateFrame > j0 && audioFrame > i0 && templateFrame < m - SETTLE_BEHIND_FRAMES) {
        this.settled.push(...placed.slice(0, next).map((p) => p.timing));
        this.anchor = { index: at.index, audioFrame, templateFrame };
      }
    }
    return {
      phonemes,
      coveredMs: coveredFrames * FEATURE_HOP_MS,
      mismatch: path.mismatch,
      audioFrames: rows,
      templateFrames: jEnd - j0,
    };
  }
}

/**
 * `featureNorm` of audio that is still arriving, updated with each new frame only: the cepstra's
 * sums are kept per 1 dB of energy, so that the speech frames (within 35 dB of the peak so far)
 * can be summed again as the peak rises.
 */
class RunningNorm {
  private frames = 0;
  private peak = -Infinity;
  private readonly bins = new Map<number, { count: number; sum: Float64Array; sq: Float64Array }>();

  /** Takes in the frames of `audio` (all so far) not yet seen. */
  add(audio: Float32Array): void {
    const e = FEATURE_DIMS - 1;
    const n = audio.length / FEATURE_DIMS;
    for (; this.frames < n; this.frames++) {
      const x = this.frames * FEATURE_DIMS;
      const db = audio[x + e] as number;
      this.peak = Math.max(this.peak, db);
      const key = Math.floor(db);
      let bin = this.bins.get(key);
      if (!bin) {
        bin = { count: 0, sum: new Float64Array(e), sq: new Float64Array(e) };
        this.bins.set(key, bin);
      }
      bin.count++;
      for (let d = 0; d < e; d++) {
        const v = audio[x + d] as number;
        bin.sum[d] = (bin.sum[d] as number) + v;
        bin.sq[d] = (bin.sq[d] as number) + v * v;
      }
    }
  }

  value(): FeatureNorm {
    const e = FEATURE_DIMS - 1;
    const sum = new Float64Array(e);
    const sq = new Float64Array(e);
    let count = 0;
    for (const [key, bin] of this.bins) {
      if (key + 1 <= this.peak - SPEECH_BELOW_PEAK_DB) continue;
      count += bin.count;
      for (let d = 0; d < e; d++) {
        sum[d] = (sum[d] as number) + (bin.sum[d] as number);
        sq[d] = (sq[d] as number) + (bin.sq[d] as number);
      }
    }
    const mean = new Float64Array(e);
    const sd = new Float64Array(e);
    for (let d = 0; d < e; d++) {
      const mu = (sum[d] as number) / Math.max(1, count);
      mean[d] = mu;
      sd[d] = Math.sqrt(Math.max(0, (sq[d] as number) / Math.max(1, count) - mu * mu)) || 1;
    }
    return { peak: this.peak, mean, sd };
  }
}
