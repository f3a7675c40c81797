// SPDX-License-Identifier: GPL-3.0-or-later
// Specks of tooth at the corners of closed lips (issue 43, item 3). Closed lips show no teeth, so
// just below the line where they meet, near each outer corner, no pixel may be as light as the
// teeth the same avatar shows with its mouth open. Measured on an RGB frame around the 68
// landmarks a face detector places on it (dlib's order: 48-59 the outer lip contour, 60-67 the
// inner). Near a corner the detector's landmarks are a few px off the line, so the line is found
// per column as its darkest pixel.
import type { Point as Pt } from '../../src/media/photo/landmarks.js';
import { inside } from '../../src/media/photo/polygon.js';

const lumaAt = (rgb: Uint8Array, width: number, x: number, y: number) => {
  const k = (y * width + x) * 3;
  return (
    0.299 * (rgb[k] as number) + 0.587 * (rgb[k + 1] as number) + 0.114 * (rgb[k + 2] as number)
  );
};

/** Lumas of the pixels within a polygon, sorted. */
function lumasWithin(rgb: Uint8Array, width: number, poly: readonly Pt[]): number[] {
  const xs = poly.map((p) => p.x);
  const ys = poly.map((p) => p.y);
  const out: number[] = [];
  for (let y = Math.floor(Math.min(...ys)); y <= Math.ceil(Math.max(...ys)); y++) {
    for (let x = Math.floor(Math.min(...xs)); x <= Math.ceil(Math.max(...xs)); x++) {
      if (inside({ x: x + 0.5, y: y + 0.5 }, poly)) out.push(lumaAt(rgb, width, x, y));
    }
  }
  return out.sort((a, b) => a - b);
}

/** How light the teeth are in a frame with the mouth open: 90th percentile in the inner lips. */
export function teethLuma(rgb: Uint8Array, width: number, landmarks: readonly Pt[]): number {
  const l = lumasWithin(rgb, width, landmarks.slice(60, 68));
  return l.length ? (l[Math.floor(l.length * 0.9)] as number) : 0;
}

/** Columns looked at about each outer corner: this many px inwards and outwards. */
const INWARDS = 8;
const OUTWARDS = 5;
/** The line is looked for this many px above and below the corner, specks this far below it. */
const LINE_REACH = 4;
const BELOW = 3;

/**
 * The pixels of a frame with closed lips, about each outer lip corner and just below the line
 * where the lips meet, lighter than the lower lip's median luma by at least half the way to
 * `teeth` (the open mouth's teeth): specks of tooth.
 */
export function cornerToothSpecks(
  rgb: Uint8Array,
  width: number,
  height: number,
  landmarks: readonly Pt[],
  teeth: number,
): Pt[] {
  const lower = lumasWithin(
    rgb,
    width,
    [48, 59, 58, 57, 56, 55, 54, 64, 65, 66, 67, 60].map((i) => landmarks[i]!),
  );
  const lip = lower[Math.floor(lower.length / 2)] ?? 0;
  const bound = lip + 0.5 * (teeth - lip);
  const specks: Pt[] = [];
  for (const [corner, outwards] of [
    [landmarks[48]!, -1],
    [landmarks[54]!, 1],
  ] as const) {
    const cx = Math.round(corner.x);
    const cy = Math.round(corner.y);
    for (let d = -INWARDS; d <= OUTWARDS; d++) {
      const x = cx + d * outwards;
      if (x < 0 || x >= width) continue;
      let line = cy;
      for (let y = cy - LINE_REACH; y <= cy + LINE_REACH; y++) {
        if (y < 0 || y >= height) continue;
        if (lumaAt(rgb, width, x, y) < lumaAt(rgb, width, x, line)) line = y;
      }
      for (let y = line + 1; y <= Math.min(height - 1, line + BELOW); y++) {
        if (lumaAt(rgb, width, x, y) >= bound) specks.push({ x, y });
      }
    }
  }
  return specks;
}
