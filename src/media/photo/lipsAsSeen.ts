// SPDX-License-Identifier: GPL-3.0-or-later
import { luma, type Colour } from './faceColours.js';

/**
 * Round an open mouth, a share of the pixels between a face detector's inner and outer lip
 * contours are not lips (issue 43, the four men's darks): on the widest-open frames of Walter
 * White, Sean Connery, Chuck Norris and Bill Murray it put the inner contour on the upper teeth's
 * lower edge and across the middle of the dark, so that "the lips" held teeth (grey and light)
 * and the lower dark (as dark as the inside), and a dark as warm as a real one read 2 times
 * warmer than lips so measured. These are left out here, alike on a real mouth and a drawn one:
 * - teeth: lighter than the ring's median and greyer (HSV saturation) than TEETH_GREYER of its
 *   median;
 * - the dark: darker than halfway (DARK_SPLIT) from the inside's darkest half (`darkLuma`) to
 *   the ring's median.
 * One definition for the figure a test measures on a frame (test/support/mouthUpClose.ts,
 * `warmth`), for the build's aim on its own widest-open frame (openMouthWarmth.ts) and for its
 * first aim (faceColours.ts, lipsSeen: at rest, with no dark of its
 * own to leave out unless the photo's mouth is open): what the viewer sees as the lips.
 */
export const TEETH_GREYER = 0.6;
export const DARK_SPLIT = 0.5;

const saturation = (c: Colour) => {
  const max = Math.max(c[0], c[1], c[2]);
  return max > 0 ? 1 - Math.min(c[0], c[1], c[2]) / max : 0;
};

const medianOf = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s[Math.floor(s.length / 2)] as number) : 0;
};

/**
 * The mean colour of the lips among `ring` (the pixels between the inner and outer lip contours)
 * round an inside whose darkest half has luma `darkLuma`; the whole ring's where nothing is left.
 */
export function lipsAsSeen(ring: readonly Colour[], darkLuma: number): Colour {
  const medianLuma = medianOf(ring.map((c) => luma(...c)));
  const medianSaturation = medianOf(ring.map(saturation));
  const darkBelow = darkLuma + DARK_SPLIT * (medianLuma - darkLuma);
  const sum = [0, 0, 0];
  let n = 0;
  for (const c of ring) {
    const l = luma(...c);
    if (l < darkBelow) continue;
    if (l > medianLuma && saturation(c) < TEETH_GREYER * medianSaturation) continue;
    for (let k = 0; k < 3; k++) sum[k]! += c[k]!;
    n++;
  }
  if (n === 0) {
    for (const c of ring) for (let k = 0; k < 3; k++) sum[k]! += c[k]!;
    n = Math.max(1, ring.length);
  }
  return [sum[0]! / n, sum[1]! / n, sum[2]! / n];
}
