import { mouthShape, type MouthShape } from '../render/index.js';
import type { Viseme } from '../lipsync/viseme.js';
import { Curve } from './curve.js';
import type { MouthShapeAtRest } from './photoFace.js';

/**
 * Where the lips, the teeth and the jaw go for one mouth shape. The shapes are the renderer's
 * own (`mouthShape(viseme, openness)`, in pixels of the catalogue faces' 56 px wide mouth),
 * scaled to the photo's mouth and applied to its real lips: the mouth widens or narrows about
 * its centre, the corners lift with a smile, lips get fuller or thinner, the lips part along the
 * line between them (lens-shaped or round) and the chin drops with the lower lip.
 *
 * A photo may show its teeth (a smile): the mouth then parts along the middle of that gap, the
 * upper teeth going with the upper lip and the lower teeth with the jaw, and what the gap grows
 * beyond is new (the synthesized inside of the mouth); a shape narrower than the photo's gap
 * closes it (m, b, p press the lips together over the teeth). Openness blends from the photo's
 * own mouth, so `rest` is the photo, untouched.
 */
const CATALOGUE_HALF_WIDTH = 28;
/**
 * The catalogue's drawn faces open wider than a real mouth does. At 0.64 the astronaut's mouth
 * wide open was 0.349 from her photo in face-recognition distance, against a goal of 0.35; at
 * 0.6, 0.303, and the rendered lip-sync is the same (r = 0.86 over 3 voices x 3 texts).
 */
const OPENING_SCALE = 0.6;
/** How much of the upper lip's inner rise the outer edge shares. */
const UPPER_OUTER_SHARE = 0.4;
/** Share of the lower lip's drop that the chin follows. */
const CHIN_SHARE = 0.8;
/** Jaw points 3..13: how far each follows the chin (the jaw hinges near the ears). */
const JAW_FOLLOW: Record<number, number> = {
  3: 0,
  4: 0.12,
  5: 0.35,
  6: 0.65,
  7: 0.88,
  8: 1,
  9: 0.88,
  10: 0.65,
  11: 0.35,
  12: 0.12,
  13: 0,
};
/** Samples along each lip contour that steer the warp. */
const CONTOUR_SAMPLES = 9;
/** A gap between the photo's lips narrower than this (px) counts as closed. */
const CLOSED_GAP = 1;

export interface ControlPoint {
  /** At rest (face coordinates of the mouth frame). */
  from: { u: number; v: number };
  /** In this shape. */
  to: { u: number; v: number };
}

export interface MouthOpening {
  /** Edges of the new gap between the parted teeth (or lips), v(u). */
  upper: Curve;
  lower: Curve;
  uMin: number;
  uMax: number;
  /** Half the opening's width, px. */
  halfSpan: number;
}

export interface MouthPoseGeometry {
  /** Pairs that steer the warp: lips, the photo's teeth, the jaw. */
  points: ControlPoint[];
  /** The new gap, where the inside of the mouth is synthesized; null when there is none. */
  opening: MouthOpening | null;
  /** How far the chin moved down, px. */
  jawDrop: number;
  /** Catalogue pixels to this mouth's pixels. */
  scale: number;
  /** Teeth visible in the photo itself (half its gap, px): synthesized teeth add only the rest. */
  photoTeeth: number;
  shape: MouthShape;
}

const REST = mouthShape('rest', 0);

export function mouthPose(
  rest: MouthShapeAtRest,
  viseme: Viseme,
  amount: number,
): MouthPoseGeometry {
  const shape = mouthShape(viseme, amount);
  const full = mouthShape(viseme, 1);
  const a = Math.min(1, Math.max(0, amount));
  const k = rest.halfWidth / CATALOGUE_HALF_WIDTH;
  const widen = shape.halfWidth / REST.halfWidth;
  const lift = -(shape.smile - REST.smile) * k * 0.8;
  const fullerTop = (shape.upperLip - REST.upperLip) * k * 0.7;
  const fullerBottom = (shape.lowerLip - REST.lowerLip) * k * 0.7;
  const round = Math.min(1, Math.max(0, shape.roundness));
  const profile = (t: number) => {
    const q = Math.max(0, 1 - t * t);
    return (1 - round) * q + round * Math.sqrt(q);
  };
  const bulge = (t: number) => Math.max(0, 1 - t * t);
  const hw = rest.halfWidth;
  const innerU = (t: number) => rest.innerMin + ((t + 1) / 2) * (rest.innerMax - rest.innerMin);

  /** The inner edges at t: the photo's, and this shape's (blended from the photo's by `a`). */
  const inner = (t: number) => {
    const u = innerU(t);
    const upper = rest.upperInner.at(u);
    const lower = Math.max(upper, rest.lowerInner.at(u));
    const parting = (upper + lower) / 2;
    const halfGap = (lower - upper) / 2;
    const up = full.openTop * k * OPENING_SCALE * profile(t);
    const down = full.openBottom * k * OPENING_SCALE * profile(t);
    const corner = lift * t * t;
    const upperTo = parting - (halfGap + (up - halfGap) * a) + corner;
    const lowerTo = parting + (halfGap + (down - halfGap) * a) + corner;
    // The photo's teeth keep their height while there is room, and squash when there is not.
    const teeth = Math.min(halfGap, Math.max(0, (lowerTo - upperTo) / 2));
    return { u, upper, lower, parting, halfGap, upperTo, lowerTo, teeth, uTo: u * widen };
  };

  const points: ControlPoint[] = [];
  for (let i = 0; i < CONTOUR_SAMPLES; i++) {
    const t = -1 + (2 * i) / (CONTOUR_SAMPLES - 1);
    const corner = lift * t * t;
    const mid = inner(0);
    // The lower lip and the chin follow how far the middle of the lower inner edge went down.
    const lowerDrop = mid.lowerTo - mid.lower - lift * 0;
    const upperRise = mid.upper - mid.upperTo;
    const u = t * hw;
    const upperOuter = rest.upperOuter.at(u);
    const lowerOuter = rest.lowerOuter.at(u);
    points.push({
      from: { u, v: upperOuter },
      to: {
        u: u * widen,
        v: upperOuter - (upperRise * UPPER_OUTER_SHARE + fullerTop) * bulge(t) + corner,
      },
    });
    if (i > 0 && i < CONTOUR_SAMPLES - 1) {
      points.push({
        from: { u, v: lowerOuter },
        to: { u: u * widen, v: lowerOuter + (lowerDrop + fullerBottom) * bulge(t) + corner },
      });
    }
    const p = inner(t);
    points.push({ from: { u: p.u, v: p.upper }, to: { u: p.uTo, v: p.upperTo } });
    if (i === 0 || i === CONTOUR_SAMPLES - 1) continue;
    points.push({ from: { u: p.u, v: p.lower }, to: { u: p.uTo, v: p.lowerTo } });
    if (p.halfGap * 2 >= CLOSED_GAP) {
      // The parting line inside the photo's gap, once for each side of it.
      points.push({
        from: { u: p.u, v: p.parting - 0.01 },
        to: { u: p.uTo, v: p.upperTo + p.teeth },
      });
      points.push({
        from: { u: p.u, v: p.parting + 0.01 },
        to: { u: p.uTo, v: p.lowerTo - p.teeth },
      });
    }
  }
  const mid = inner(0);
  const jawDrop = Math.max(0, mid.lowerTo - mid.lower) * CHIN_SHARE;
  for (const j of rest.jaw) {
    points.push({
      from: { u: j.u, v: j.v },
      to: { u: j.u, v: j.v + jawDrop * (JAW_FOLLOW[j.index] ?? 0) },
    });
  }

  // The new gap: between the parted teeth (or lips), wherever it is open.
  const upper: { u: number; v: number }[] = [];
  const lower: { u: number; v: number }[] = [];
  let open = false;
  const n = 17;
  for (let i = 0; i < n; i++) {
    const t = -1 + (2 * i) / (n - 1);
    const p = inner(t);
    const top = p.upperTo + p.teeth;
    const bottom = p.lowerTo - p.teeth;
    if (bottom - top > 0.05) open = true;
    upper.push({ u: p.uTo, v: top });
    lower.push({ u: p.uTo, v: Math.max(top, bottom) });
  }
  const uMin = rest.innerMin * widen;
  const uMax = rest.innerMax * widen;
  return {
    points,
    opening: open
      ? {
          upper: new Curve(upper),
          lower: new Curve(lower),
          uMin,
          uMax,
          halfSpan: (uMax - uMin) / 2,
        }
      : null,
    jawDrop,
    scale: k,
    photoTeeth: mid.halfGap,
    shape,
  };
}

/** The largest chin drop any shape asks for (sizes the mouth sprite's rectangle). */
export function maxJawDrop(rest: MouthShapeAtRest, widestOpenBottom: number): number {
  return widestOpenBottom * (rest.halfWidth / CATALOGUE_HALF_WIDTH) * OPENING_SCALE * CHIN_SHARE;
}
