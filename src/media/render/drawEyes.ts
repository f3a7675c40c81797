// SPDX-License-Identifier: GPL-3.0-or-later
import { band, ellipse, quadratic, stroke, type Point } from './implicitShape.js';
import type { FaceDesign } from './faceDesign.js';
import { BROWS, EYES, HEAD } from './faceGeometry.js';
import { mix, shade, type Raster } from './raster.js';

/** One eye sprite's state. */
export interface EyeState {
  /** Upper lid: 0 open, 1 closed. */
  readonly lid: number;
  /** Gaze, -1..1 (left/right, up/down as seen by the viewer). */
  readonly gazeX: number;
  readonly gazeY: number;
  /** Brows drop this many pixels (relaxed, parked). */
  readonly browDrop: number;
}

const SCLERA: [number, number, number] = [247, 243, 238];
const PUPIL: [number, number, number] = [22, 16, 16];

/** Draws both eyes and brows (atlas-build time). */
export function drawEyes(r: Raster, d: FaceDesign, s: EyeState): void {
  const lash = shade(d.brow, 0.7);
  for (const side of [-1, 1] as const) {
    const ex = HEAD.cx + side * EYES.dx;
    const ey = EYES.y;
    const hw = EYES.halfWidth;
    const u = (x: number): number => Math.max(-1, Math.min(1, (x - ex) / hw));
    // The upper lid peaks a little towards the nose, as real eyes do.
    const top = (x: number): number => {
      const v = u(x);
      return ey - EYES.openUp * (1 - v * v) ** 0.65 * (1 - 0.12 * v * side);
    };
    const bottom = (x: number): number => ey + EYES.openDown * (1 - u(x) ** 2) ** 0.85;
    const lidEdge = (x: number): number => top(x) + (bottom(x) - top(x)) * s.lid;
    const x0 = ex - hw;
    const x1 = ex + hw;

    // Socket shading and the lid crease.
    r.fill(ellipse(ex, ey - 5, hw + 8, 17), d.skinShadow, { opacity: 0.22, feather: 9 });
    const crease: Point[] = [];
    for (let i = 0; i <= 10; i++) {
      const x = x0 + 3 + ((hw * 2 - 6) * i) / 10;
      crease.push([x, top(x) - 5 - s.lid * 2]);
    }
    r.fill(stroke(crease, 0.5, 0.9, 0.5), d.skinShadow, { opacity: 0.5 });

    const opening = band(x0, x1, lidEdge, bottom, ey - EYES.openUp - 1, ey + EYES.openDown + 1);
    if (s.lid < 0.97) {
      r.fill(opening, (_x, y) => mix(shade(SCLERA, 0.86), SCLERA, Math.min(1, (y - ey + 8) / 8)));
      const ix = ex + s.gazeX * 5.5;
      const iy = ey + 0.5 + s.gazeY * 4.5;
      r.fill(ellipse(ix, iy, 10.5, 10.5), shade(d.iris, 0.6), { clip: opening });
      r.fill(
        ellipse(ix, iy + 1, 8.2, 8.2),
        (x, y) => mix(shade(d.iris, 1.25), d.iris, Math.min(1, Math.hypot(x - ix, y - iy - 3) / 8)),
        {
          clip: opening,
          feather: 2.5,
        },
      );
      r.fill(ellipse(ix, iy, 4.6, 4.6), PUPIL, { clip: opening });
      r.fill(ellipse(ix - 3.6, iy - 3.8, 2.6, 2.6), [255, 255, 255], {
        clip: opening,
        opacity: 0.95,
      });
      r.fill(ellipse(ix + 3.2, iy + 3, 1.2, 1.2), [255, 255, 255], { clip: opening, opacity: 0.7 });
      // The lid casts a soft shadow on the eyeball.
      r.fill(
        band(x0, x1, lidEdge, (x) => lidEdge(x) + 3.5, ey - 14, ey + 12),
        [40, 20, 20],
        {
          clip: opening,
          opacity: 0.22,
          feather: 2,
        },
      );
      // Lower lid line.
      const lower: Point[] = [];
      for (let i = 0; i <= 10; i++) {
        const x = x0 + 2 + ((hw * 2 - 4) * i) / 10;
        lower.push([x, bottom(x) + 0.6]);
      }
      r.fill(stroke(lower, 0.3, 0.7, 0.3), d.skinShadow, { opacity: 0.7 });
    }

    // Lash line along the lid edge, heavier towards the outer corner.
    const edge: Point[] = [];
    for (let i = 0; i <= 12; i++) {
      const x = x0 - 1 + ((hw * 2 + 2) * i) / 12;
      edge.push([x, lidEdge(x)]);
    }
    if (side === -1) edge.reverse(); // start at the inner corner
    r.fill(stroke(edge, 0.8, 1.6, d.lashes ? 2.2 : 1.5), lash);
    if (d.lashes) {
      const outerX = ex + side * hw;
      const outerY = lidEdge(outerX);
      const flick = quadratic(
        [outerX - side * 3, outerY],
        [outerX + side * 3, outerY - 1],
        [outerX + side * 7, outerY - 5],
        8,
      );
      r.fill(stroke(flick, 1.6, 1.1, 0.3), lash);
    }

    // Brow: thick at the inner end, tapering outwards.
    const drop = s.browDrop + s.lid * 1.5;
    const inner: Point = [ex - side * 21, BROWS.y + 5 + drop];
    const arch: Point = [ex + side * 4, BROWS.y - 8 + drop];
    const outer: Point = [ex + side * 30, BROWS.y + 4 + drop * 0.8];
    r.fill(
      stroke(quadratic(inner, arch, outer, 12), d.browWeight, d.browWeight * 0.85, 1.2),
      d.brow,
    );
  }
}
