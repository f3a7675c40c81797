// SPDX-License-Identifier: GPL-3.0-or-later
// Points and polygons in a frame's pixel coordinates, for the mouth measures.

export type Pt = { x: number; y: number };

/** Whether p lies inside the polygon (even-odd rule). */
export function inside(p: Pt, poly: readonly Pt[]): boolean {
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
