// SPDX-License-Identifier: GPL-3.0-or-later
import { luma, type Colour } from './faceColours.js';
import type { Point } from './landmarks.js';
import { lipsAsSeen } from './lipsAsSeen.js';
import { inside as inPolygon } from './polygon.js';

/**
 * How warm the dark of an open mouth is against its lips, where a face detector puts them on a
 * frame (issue 43): (R - B) over luma of the mean colour of the darkest half of the pixels inside
 * the inner lip contour (landmarks 60-67), over the same of the lips (lipsAsSeen: the pixels
 * between the inner and outer contours, 48-59, that are neither teeth nor dark). The build aims
 * its dark's gain with it on its own widest-open frame (buildPhotoAtlas): the lips a viewer sees
 * round an open mouth are not the photo's at rest (stretched, lit and cut differently: Walter
 * White's 0.79 in (R - B) over luma where the photo's read 0.92), and the dark inside the contour
 * is not the whole opening. NaN where the dark is not dark (its luma at least DARK_SHARE of the
 * lips', a smile's sliver) or the lips are not warm. The tests measure real mouths and rendered
 * frames with the same rule (darkWarmth, lipsAsSeen).
 */
export function openMouthWarmth(
  rgb: Uint8Array,
  width: number,
  height: number,
  landmarks: readonly Point[],
  /** Where the picture's top left pixel lies in the landmarks' coordinates (a part of a frame). */
  origin: { x: number; y: number } = { x: 0, y: 0 },
): number {
  const outer = landmarks.slice(48, 60);
  const inner = landmarks.slice(60, 68);
  const colourAt = (x: number, y: number): Colour => {
    const k = ((y - origin.y) * width + (x - origin.x)) * 3;
    return [rgb[k] as number, rgb[k + 1] as number, rgb[k + 2] as number];
  };
  const inside: Colour[] = [];
  const ring: Colour[] = [];
  const box = boxOf(outer, origin, width, height);
  for (let y = box.y0; y <= box.y1; y++) {
    for (let x = box.x0; x <= box.x1; x++) {
      const p = { x: x + 0.5, y: y + 0.5 };
      if (!inPolygon(p, outer) && !inPolygon(p, inner)) continue;
      (inPolygon(p, inner) ? inside : ring).push(colourAt(x, y));
    }
  }
  if (!inside.length || !ring.length) return NaN;
  inside.sort((a, b) => luma(...a) - luma(...b));
  const dark = meanOf(inside.slice(0, Math.max(1, Math.floor(inside.length / 2))));
  return darkWarmth(dark, lipsAsSeen(ring, luma(...dark)));
}

/** The dark's luma is under this share of the lips' for its warmth to be measured. */
export const DARK_SHARE = 0.6;

/**
 * (R - B) over luma of `dark` over the same of `lips`: the warmth rule of the build's aim and of
 * the mouth figures (test/support/mouthUpClose.ts). NaN where `dark` is not dark (its luma at
 * least DARK_SHARE of the lips') or the lips are not warm.
 */
export function darkWarmth(dark: Colour, lips: Colour): number {
  const warm = (c: Colour) => (c[0] - c[2]) / Math.max(1, luma(...c));
  if (!(luma(...dark) < DARK_SHARE * luma(...lips)) || !(warm(lips) > 0.05)) return NaN;
  return warm(dark) / warm(lips);
}

function boxOf(
  poly: readonly Point[],
  origin: { x: number; y: number },
  width: number,
  height: number,
) {
  const xs = poly.map((p) => p.x);
  const ys = poly.map((p) => p.y);
  return {
    x0: Math.max(origin.x, Math.floor(Math.min(...xs))),
    x1: Math.min(origin.x + width - 1, Math.ceil(Math.max(...xs))),
    y0: Math.max(origin.y, Math.floor(Math.min(...ys))),
    y1: Math.min(origin.y + height - 1, Math.ceil(Math.max(...ys))),
  };
}

function meanOf(colours: readonly Colour[]): Colour {
  const sum = [0, 0, 0];
  for (const c of colours) for (let k = 0; k < 3; k++) sum[k]! += c[k]!;
  const n = Math.max(1, colours.length);
  return [sum[0]! / n, sum[1]! / n, sum[2]! / n];
}
