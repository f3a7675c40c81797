// SPDX-License-Identifier: GPL-3.0-or-later
import type { Point } from './landmarks.js';
import type { RgbPicture } from './photoImage.js';

/**
 * The flat corners of a picture that was turned before it was uploaded (a tilted scan, a photo
 * straightened or tipped in an editor): the turn fills each corner of its bounding box with one
 * colour, a right triangle whose legs run along the picture's two edges. They are not the
 * picture: a head turned upright by the build (uprightFace.ts) would show them as a wedge of
 * that colour in a corner of the frame. Found here, they count as outside the picture, and
 * their pixels are filled from the picture itself (mirrored at the triangle's long side, as
 * what lies beyond the picture's edge is, photoImage.ts).
 */
export interface PaddingCorner {
  /** The picture's corner the triangle sits in. */
  corner: Point;
  /** Its legs along the picture's top or bottom edge (x) and its left or right edge (y), px. */
  legX: number;
  legY: number;
}

/** A corner pixel's colour and the triangle's agree within this, per channel (JPEG's noise). */
const SAME_COLOUR = 12;
/** A triangle's legs are at least this long, px, in the picture it is found in. */
const LEAST_LEG = 16;
/**
 * Its long side is straight: of its rows and columns, at least this share ends within
 * STRAIGHT_PX (and 2 % of the leg) of the line between the legs' ends. A flat backdrop in a
 * corner of a photo ends where what stands in front of it begins, not on a line.
 */
const STRAIGHT_SHARE = 0.9;
const STRAIGHT_PX = 3;
/**
 * A turn pads every corner at one angle (each triangle's smaller acute angle is the turn's,
 * folded to 45 degrees at most): at least two corners agree within this, degrees (a picture
 * turned, then cropped to one padded corner, is left as it is; so is one flat corner of a real
 * photo).
 */
const SAME_ANGLE_DEG = 2;
/** The long side is moved out by this much, px, to cover the turn's blended seam. */
const SEAM = 2;

/**
 * The padding triangles of an RGB picture, in its pixels (at most one per corner). A flat
 * corner that is not a triangle with a straight long side (a plain backdrop, a border along a
 * whole edge), or whose angle no other corner shares, is none.
 */
export function findPadding(picture: RgbPicture): PaddingCorner[] {
  const { width, height, data } = picture;
  const found: PaddingCorner[] = [];
  for (const [cx, cy] of [
    [0, 0],
    [width - 1, 0],
    [0, height - 1],
    [width - 1, height - 1],
  ] as const) {
    const sx = cx === 0 ? 1 : -1;
    const sy = cy === 0 ? 1 : -1;
    const at = (dx: number, dy: number) => ((cy + sy * dy) * width + cx + sx * dx) * 3;
    const c = at(0, 0);
    const same = (dx: number, dy: number) => {
      const i = at(dx, dy);
      return (
        Math.abs(data[i]! - data[c]!) <= SAME_COLOUR &&
        Math.abs(data[i + 1]! - data[c + 1]!) <= SAME_COLOUR &&
        Math.abs(data[i + 2]! - data[c + 2]!) <= SAME_COLOUR
      );
    };
    let a = 0;
    while (a < width && same(a, 0)) a++;
    let b = 0;
    while (b < height && same(0, b)) b++;
    // A run along a whole edge is a border or a backdrop, not a turned picture's corner.
    if (a < LEAST_LEG || b < LEAST_LEG || a >= width || b >= height) continue;
    // Each row's run of the colour from the picture's edge, and each column's, against the
    // line from one leg's end to the other's.
    const straight = (
      legAlong: number,
      legAcross: number,
      at: (along: number, across: number) => boolean,
    ) => {
      const step = Math.max(1, Math.floor(legAcross / 60));
      let rows = 0;
      let onLine = 0;
      for (let k = 0; k < legAcross; k += step) {
        let run = 0;
        while (run < legAlong + STRAIGHT_PX + 1 && at(run, k)) run++;
        const expected = legAlong * (1 - (k + 0.5) / legAcross);
        rows++;
        if (Math.abs(run - expected) <= STRAIGHT_PX + 0.02 * legAlong) onLine++;
      }
      return onLine >= STRAIGHT_SHARE * rows;
    };
    const inside = (dx: number, dy: number) => dx < width && dy < height && same(dx, dy);
    if (!straight(a, b, (along, k) => inside(along, k))) continue;
    if (!straight(b, a, (along, k) => inside(k, along))) continue;
    const grow = 1 + SEAM * Math.hypot(1 / a, 1 / b);
    found.push({
      corner: { x: cx === 0 ? 0 : width, y: cy === 0 ? 0 : height },
      legX: a * grow,
      legY: b * grow,
    });
  }
  const angle = (t: PaddingCorner) =>
    (Math.atan(Math.min(t.legX, t.legY) / Math.max(t.legX, t.legY)) * 180) / Math.PI;
  return found.filter((t) =>
    found.some((u) => u !== t && Math.abs(angle(u) - angle(t)) <= SAME_ANGLE_DEG),
  );
}

/** The triangles in a picture `k` times as large. */
export function scalePadding(corners: readonly PaddingCorner[], k: number): PaddingCorner[] {
  return corners.map((p) => ({
    corner: { x: p.corner.x * k, y: p.corner.y * k },
    legX: p.legX * k,
    legY: p.legY * k,
  }));
}

/** Whether a point (picture px) lies in one of the triangles. */
export function inPadding(corners: readonly PaddingCorner[], p: Point): boolean {
  return corners.some(
    (t) => Math.abs(p.x - t.corner.x) / t.legX + Math.abs(p.y - t.corner.y) / t.legY < 1,
  );
}

/**
 * The triangles' pixels of a part of the picture (its top left corner at `origin`, picture px)
 * filled, in place, with the pixel mirrored at the triangle's long side (the nearest pixel
 * of the part where the mirror image falls outside it or in another triangle).
 */
export function fillPadding(
  part: RgbPicture,
  origin: Point,
  corners: readonly PaddingCorner[],
): void {
  const { width, height, data } = part;
  for (const t of corners) {
    const sx = t.corner.x === 0 ? 1 : -1;
    const sy = t.corner.y === 0 ? 1 : -1;
    // In the triangle's own frame (dx, dy from its corner), its long side is dx/a + dy/b = 1.
    const n = Math.hypot(1 / t.legX, 1 / t.legY);
    const nx = 1 / t.legX / n;
    const ny = 1 / t.legY / n;
    const i0 = Math.max(0, Math.floor(Math.min(t.corner.x, t.corner.x + sx * t.legX) - origin.x));
    const i1 = Math.min(
      width,
      Math.ceil(Math.max(t.corner.x, t.corner.x + sx * t.legX) - origin.x),
    );
    const j0 = Math.max(0, Math.floor(Math.min(t.corner.y, t.corner.y + sy * t.legY) - origin.y));
    const j1 = Math.min(
      height,
      Math.ceil(Math.max(t.corner.y, t.corner.y + sy * t.legY) - origin.y),
    );
    for (let j = j0; j < j1; j++) {
      for (let i = i0; i < i1; i++) {
        // The pixel's centre, from the triangle's corner.
        const dx = sx * (origin.x + i + 0.5 - t.corner.x);
        const dy = sy * (origin.y + j + 0.5 - t.corner.y);
        const s = (dx / t.legX + dy / t.legY - 1) / n;
        if (s >= 0) continue;
        const pixel = (ex: number, ey: number) => ({
          i: Math.min(width - 1, Math.max(0, Math.floor(t.corner.x + sx * ex - origin.x))),
          j: Math.min(height - 1, Math.max(0, Math.floor(t.corner.y + sy * ey - origin.y))),
        });
        let from = pixel(dx - 2 * s * nx, dy - 2 * s * ny);
        if (inPadding(corners, { x: origin.x + from.i + 0.5, y: origin.y + from.j + 0.5 })) {
          // The mirror image falls in another triangle: the nearest pixel past the long side.
          from = pixel(dx - (s - 1) * nx, dy - (s - 1) * ny);
        }
        const d = (j * width + i) * 3;
        const f = (from.j * width + from.i) * 3;
        data[d] = data[f]!;
        data[d + 1] = data[f + 1]!;
        data[d + 2] = data[f + 2]!;
      }
    }
  }
}
