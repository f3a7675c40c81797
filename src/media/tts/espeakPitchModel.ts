// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * How espeak-ng's en-us intonation turns a variant `pitch <base> <top>` line and the RANGE
 * parameter into measured F0, for top = 1.5 x base (measured with this package's pitch tracker on
 * the espeak-ng build in use):
 *
 *   median F0 ~= base x (1.19 + 0.0036 x range)      (range 0 -> 1.19, 100 -> 1.55)
 *   ... about 6 % less for low (male) bases: factor 1 - 0.06 x clamp((130 - base) / 50, 0, 1)
 *   p10-p90 spread ~= 0.2 + 0.05 x range semitones   (range 0 -> 0.2, 100 -> 5.2)
 *
 * This is the open-loop first guess; voice building then corrects it by measuring real output.
 */
export const TOP_OVER_BASE = 1.5;

export function medianGain(range: number, pitchBaseHz = 130): number {
  const lowBase = Math.min(1, Math.max(0, (130 - pitchBaseHz) / 50));
  return (1.19 + 0.0036 * range) * (1 - 0.06 * lowBase);
}

export function rangeForSpread(spreadSemitones: number): number {
  return Math.min(100, Math.max(0, (spreadSemitones - 0.2) / 0.05));
}

export function spreadForRange(range: number): number {
  return 0.2 + 0.05 * range;
}

/** Variant pitch line and RANGE that should give this median F0 and spread. */
export function espeakPitchFor(
  medianHz: number,
  spreadSemitones: number,
): { pitchBaseHz: number; pitchTopHz: number; range: number } {
  const range = rangeForSpread(spreadSemitones);
  // The gain depends a little on the base itself: a few fixed-point steps settle it.
  let pitchBaseHz = medianHz / medianGain(range);
  for (let i = 0; i < 4; i++) pitchBaseHz = medianHz / medianGain(range, pitchBaseHz);
  return { pitchBaseHz, pitchTopHz: pitchBaseHz * TOP_OVER_BASE, range };
}
