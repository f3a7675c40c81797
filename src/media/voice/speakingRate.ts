// SPDX-License-Identifier: GPL-3.0-or-later
import type { PitchTrack } from './pitchTracker.js';

/**
 * Speaking rate as syllables per second of speaking time. Syllable nuclei are the peaks of the
 * smoothed loudness envelope that are voiced and stand out at least 2 dB above the dips on
 * either side; speaking time excludes pauses longer than 250 ms. Counts depend on the text as
 * much as on the speaker, so rates are compared on the same text or treated as rough.
 */
export interface SpeakingRate {
  syllablesPerSecond: number;
  syllables: number;
  speakingSeconds: number;
}

const SMOOTH_FRAMES = 5; // 50 ms at the tracker's 10 ms hop
const MIN_PROMINENCE_DB = 2;
const MIN_PEAK_GAP_FRAMES = 8; // 80 ms: no one says 12 syllables a second
const PAUSE_FRAMES = 25;

export function measureSpeakingRate(track: PitchTrack): SpeakingRate {
  const n = track.rms.length;
  if (n === 0) return { syllablesPerSecond: 0, syllables: 0, speakingSeconds: 0 };
  const db = Float64Array.from(track.rms, (v) => 20 * Math.log10(v + 1e-9));
  const smooth = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    let sum = 0;
    let count = 0;
    for (let k = i - (SMOOTH_FRAMES >> 1); k <= i + (SMOOTH_FRAMES >> 1); k++) {
      if (k < 0 || k >= n) continue;
      sum += db[k]!;
      count++;
    }
    smooth[i] = sum / count;
  }
  const loud = [...smooth].sort((a, b) => a - b)[Math.floor(n * 0.95)]!;
  const active = Uint8Array.from(smooth, (v) => (v > loud - 35 ? 1 : 0));

  // Speaking time: active frames, plus gaps shorter than a pause (closures inside words).
  let speakingFrames = 0;
  const first = active.indexOf(1);
  if (first < 0) return { syllablesPerSecond: 0, syllables: 0, speakingSeconds: 0 };
  let gap = 0;
  for (let i = first; i < n; i++) {
    if (active[i]) {
      if (gap > 0 && gap < PAUSE_FRAMES) speakingFrames += gap;
      gap = 0;
      speakingFrames++;
    } else gap++;
  }

  const voicedNear = (i: number): boolean => {
    for (let k = Math.max(0, i - 3); k <= Math.min(n - 1, i + 3); k++) {
      if (track.f0[k]! > 0) return true;
    }
    return false;
  };
  let syllables = 0;
  let lastPeak = -Infinity;
  let dip = Infinity; // lowest point since the last accepted peak
  for (let i = 1; i < n - 1; i++) {
    dip = Math.min(dip, smooth[i]!);
    const isPeak = smooth[i]! >= smooth[i - 1]! && smooth[i]! > smooth[i + 1]!;
    if (!isPeak || !active[i] || !voicedNear(i)) continue;
    if (smooth[i]! - dip < MIN_PROMINENCE_DB) continue;
    // The dip after the peak must also be deep enough: look ahead to the next rise.
    let j = i + 1;
    let after = smooth[i]!;
    while (j < n && smooth[j]! <= smooth[j - 1]!) after = smooth[j++]!;
    if (smooth[i]! - after < MIN_PROMINENCE_DB && j < n) continue;
    if (i - lastPeak < MIN_PEAK_GAP_FRAMES) continue;
    syllables++;
    lastPeak = i;
    dip = Infinity;
  }
  const speakingSeconds = (speakingFrames * track.hopMs) / 1000;
  return {
    syllablesPerSecond: speakingSeconds > 0 ? syllables / speakingSeconds : 0,
    syllables,
    speakingSeconds,
  };
}
