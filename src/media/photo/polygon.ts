// SPDX-License-Identifier: GPL-3.0-or-later
import type { Point } from './landmarks.js';

/**
 * Whether p lies inside the polygon (even-odd rule): a pixel's centre within a landmark contour
 * (the lips' inner and outer contours, for the dark's warmth and the mouth measures).
 */
export function inside(p: Point, poly: readonly Point[]): boolean {
  let hit = false;
  for (let i = 0, j = poly.length - 1; i < poly.length; j = i++) {
    const a = poly[i]!;
    const b = poly[j]!;
    if (a.y > p.y !== b.y > p.y && p.x < ((b.x - a.x) * (p.y - a.y)) / (b.y - a.y) + a.x) {
      hit = !hit;
    }
  }
  return hit;
}
