/**
 * How espeak-ng's en-us intonation turns a variant `pitch <base> <top>` line and the RANGE
 * parameter into measured F0, for top = 1.5 x base (measured with this package's pitch tracker on
 * the espeak-ng build in use; see the notes in research/media-core.md, section 3.2):
 *
 *   median F0 ~= base x (1.19 + 0.0036 x range)      (range 0 -> 1.19, 100 -> 1.55)
 *   p10-p90 spread ~= 0.2 + 0.05 x range semitones   (range 0 -> 0.2, 100 -> 5.2)
 *
 * This is the open-loop first guess; voice building then corrects it by measuring real output.
 */
export const TOP_OVER_BASE = 1.5;

export function medianGain(range: number): number {
  return 1.19 + 0.0036 * range;
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
  const pitchBaseHz = medianHz / medianGain(range);
  return { pitchBaseHz, pitchTopHz: pitchBaseHz * TOP_OVER_BASE, range };
}
