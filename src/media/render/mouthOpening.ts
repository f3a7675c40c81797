// SPDX-License-Identifier: GPL-3.0-or-later
import type { Rect } from './faceGeometry.js';

/** A pixel darker than this share of the region's median luma counts as the open mouth's inside. */
const DARK_SHARE_OF_MEDIAN = 0.55;

/**
 * How open the mouth is in a decoded frame: the share (0..1) of the region's luma pixels that
 * are much darker than the region's median (the skin), i.e. the inside of the mouth. A closed
 * mouth shows only the thin line between the lips (about 0.02 with the renderer's `mouthRegion`),
 * a wide-open one 0.1 or more. It reads only the Y plane and compares with the region's own
 * median, so it works for every skin tone and survives video coding; frames of any size work as
 * long as `region` is in that frame's pixels.
 */
export function measureMouthOpening(
  i420: Uint8Array,
  width: number,
  height: number,
  region: Rect,
): number {
  const x0 = Math.max(0, Math.floor(region.x));
  const y0 = Math.max(0, Math.floor(region.y));
  const x1 = Math.min(width, Math.ceil(region.x + region.width));
  const y1 = Math.min(height, Math.ceil(region.y + region.height));
  if (x1 <= x0 || y1 <= y0) return 0;
  const histogram = new Uint32Array(256);
  for (let y = y0; y < y1; y++) {
    for (let x = x0; x < x1; x++) {
      const v = i420[y * width + x] as number;
      histogram[v] = (histogram[v] as number) + 1;
    }
  }
  const count = (x1 - x0) * (y1 - y0);
  let median = 0;
  for (let seen = 0; median < 256; median++) {
    seen += histogram[median] as number;
    if (seen * 2 >= count) break;
  }
  const threshold = median * DARK_SHARE_OF_MEDIAN;
  let dark = 0;
  for (let v = 0; v < threshold; v++) dark += histogram[v] as number;
  return dark / count;
}
