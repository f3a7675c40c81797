// SPDX-License-Identifier: GPL-3.0-or-later
// Runs in the browser (bundled into the test pages' scripts).

/**
 * How open the mouth drawn on a canvas is: the same measure as the server's
 * `measureMouthOpening`, the share of the region's pixels darker than 0.55 x its median luma.
 */
export function mouthOpening(g: CanvasRenderingContext2D, r: DOMRectInit): number {
  const { data } = g.getImageData(r.x!, r.y!, r.width!, r.height!);
  const histogram = new Uint32Array(256);
  for (let k = 0; k < data.length; k += 4) {
    const y = Math.round(0.257 * data[k]! + 0.504 * data[k + 1]! + 0.098 * data[k + 2]! + 16);
    histogram[Math.min(255, y)]!++;
  }
  const count = data.length / 4;
  let median = 0;
  for (let seen = 0; median < 256; median++) {
    seen += histogram[median]!;
    if (seen * 2 >= count) break;
  }
  let dark = 0;
  for (let v = 0; v < median * 0.55; v++) dark += histogram[v]!;
  return dark / count;
}
