// SPDX-License-Identifier: GPL-3.0-or-later
import { mouthShape, type MouthShape } from '../render/index.js';
import { LIP_CLOSURES, type Viseme } from '../lipsync/viseme.js';
import { Curve } from './curve.js';
import type { MouthShapeAtRest } from './photoFace.js';
import type { PhotoTeeth } from './photoTeeth.js';

/**
 * Where the lips, the teeth and the jaw go for one mouth shape. The shapes are the renderer's
 * own (`mouthShape(viseme, openness)`, in pixels of the catalogue faces' 56 px wide mouth),
 * scaled to the photo's mouth and applied to its real lips: the mouth widens or narrows about
 * its centre, the corners lift with a smile, lips get fuller or thinner, the lips part along the
 * line between them (lens-shaped or round) and the chin drops with the lower lip.
 *
 * As in a person, the upper teeth belong to the skull: a photo that shows them (a smile) parts
 * at their lower edge (see photoTeeth), the upper teeth staying with the upper lip, and the jaw
 * carries the lower lip, whatever the photo shows below the teeth, and the chin down; the dark of
 * the mouth opens below the upper teeth (the synthesized inside). A shape narrower than the
 * photo's gap closes it (m, b, p press the lips together over the teeth). Speaking lets the
 * photo's own smile go (most for o and u), so a smiling portrait does not talk through a frozen
 * grin. Openness blends from the mouth at rest: the photo's own where its lips are closed (`rest`
 * is the photo, untouched), and closed, relaxed lips where the photo shows them apart (taken
 * mid-word, or smiling with teeth): the lips are brought together over the teeth, the jaw coming
 * up with the lower lip, so that every shape starts from closed lips as a person's does, and m, b,
 * p and the pauses close them (issue 43; see docs/photo-avatars.md).
 */
const CATALOGUE_HALF_WIDTH = 28;
/**
 * The catalogue's drawn faces open wider than a real mouth does. At 0.64 the astronaut's mouth
 * wide open was 0.349 from her photo in face-recognition distance, against a goal of 0.35; at
 * 0.6, 0.303, and the rendered lip-sync is the same (r = 0.86 over 3 voices x 3 texts).
 */
const OPENING_SCALE = 0.6;
/**
 * The chin's drop for the lower lip's: the jaw turns about its hinge by the ears, and the chin,
 * further from the hinge than the lower teeth and lip, travels further.
 */
const CHIN_SHARE = 1.3;
/**
 * The chin drops at most this share of the nose-to-chin height, and at least as far as the lower
 * lip. The shapes are scaled by the mouth's width; on a wide mouth over a short lower face (a
 * smile, a face seen a little from above) CHIN_SHARE would drop the chin by a third of that
 * height or more, and the face would lengthen into someone else's. The astronaut's widest jaw
 * is 0.19.
 */
const MAX_JAW_SHARE = 0.25;
/** The upper lip (and the upper teeth with it) takes at most this share of an opening. */
const MAX_UPPER_SHARE = 0.15;
/** Lips closing over what the photo shows between them: the upper lip's share of the way. */
const CLOSE_UPPER_SHARE = 0.25;
/**
 * A mouth that already shows teeth still opens this share of a shape's opening below them, and
 * at least as much dark as the teeth are tall (within the shape's opening; the photo's own dark
 * below them counts): a broad smile's tall teeth over a sliver of dark read as teeth clenched,
 * not a mouth open (face-api's sample6, smiling: 18 px of teeth over 9 px of dark, now 16).
 */
const MIN_DARK_SHARE = 0.4;
/** A smile let go narrows the mouth by up to this share (a broad smile stretches it). */
const SMILE_NARROWING = 0.08;
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
/**
 * Lips apart by more than this share of the nose-to-chin height (in the middle of the mouth) are
 * closed at rest. A face detector's landmarks put closed lips 0 to 1.5 % apart; the goal counts
 * up to 2 % as closed (test/media/photo/lipClosure.ts).
 */
const OPEN_AT_REST_SHARE = 0.015;
/**
 * A photo whose lips are apart at rest: an open shape reaches the photo's own opening (and
 * from there opens as a closed photo's would) at this openness; below it, lips come together.
 */
const OPEN_RAMP = 0.4;
/** The chin comes up with the lower lip as the lips close: this share of its rise. */
const CLOSING_CHIN_SHARE = 1;

export interface ControlPoint {
  /** At rest (face coordinates of the mouth frame). */
  from: { u: number; v: number };
  /** In this shape. */
  to: { u: number; v: number };
  /**
   * Where the lips meet (a `seam`), the inner edge of one lip only: it steers the warp on its own
   * side of the seam, not the other (the lips' inner edges meet there, and what lay between
   * them, teeth and dark, is gone).
   */
  side?: 'upper' | 'lower';
}

/** Where closed lips meet: each side of it is warped from its own lip (no smear between). */
export interface LipSeam {
  /** The line between the lips, v(u), outer corner to outer corner. */
  line: Curve;
  /** The inner corners: the shadow between the lips fades beyond them. */
  uMin: number;
  uMax: number;
  /**
   * Where each side of the line takes its own lip's map: to the outer corners where the photo's
   * teeth reach past the inner ones (cornerTeeth), else the inner corners.
   */
  sideMin: number;
  sideMax: number;
}

export interface MouthOpening {
  /** Edges of the new gap between the parted teeth (or lips), v(u). */
  upper: Curve;
  lower: Curve;
  uMin: number;
  uMax: number;
  /** The photo's own upper teeth above the gap, px tall, v(u): synthesized ones add the rest. */
  photoTeeth: Curve;
  /**
   * The gap parts in the photo's own dark (PhotoTeeth.darkMiddle): its teeth, if any, are above
   * that dark, and none are synthesized below it.
   */
  inOwnDark: boolean;
  /**
   * The gap parts just above the photo's own dark (PhotoTeeth.bottomOverDark): what the jaw
   * carries down below it begins with that dark.
   */
  overOwnDark: boolean;
  /** Half the opening's width, px. */
  halfSpan: number;
}

export interface MouthPoseGeometry {
  /** Pairs that steer the warp: lips, the photo's teeth, the jaw. */
  points: ControlPoint[];
  /** The new gap, where the inside of the mouth is synthesized; null when there is none. */
  opening: MouthOpening | null;
  /** Where the lips meet, when this shape closes lips that the photo shows apart; else null. */
  seam: LipSeam | null;
  /** How far the chin moved down, px. */
  jawDrop: number;
  /** Catalogue pixels to this mouth's pixels. */
  scale: number;
  shape: MouthShape;
}

const REST = mouthShape('rest', 0);

export function mouthPose(
  rest: MouthShapeAtRest,
  teeth: PhotoTeeth,
  viseme: Viseme,
  amount: number,
  /** The most the chin may drop (px): a close-up has little room below it in the frame. */
  maxJawDrop = Infinity,
): MouthPoseGeometry {
  const shape = mouthShape(viseme, amount);
  const full = mouthShape(viseme, 1);
  const a = Math.min(1, Math.max(0, amount));
  const k = rest.halfWidth / CATALOGUE_HALF_WIDTH;
  const hw = rest.halfWidth;
  const chinV = rest.jaw.find((j) => j.index === 8)?.v ?? rest.noseBase;
  const relax = smileRelax(full.smile) * a;
  const widen =
    (shape.halfWidth / REST.halfWidth) * (1 - SMILE_NARROWING * relax * photoSmileShare(rest));
  // The corners: the catalogue's lift, and the photo's own smile relaxing while speaking.
  const lift = -(shape.smile - REST.smile) * k * 0.8 + photoSmile(rest) * relax;
  const fullerTop = (shape.upperLip - REST.upperLip) * k * 0.7;
  const fullerBottom = (shape.lowerLip - REST.lowerLip) * k * 0.7;
  const round = Math.min(1, Math.max(0, full.roundness));
  const profile = (t: number) => {
    const q = Math.max(0, 1 - t * t);
    return (1 - round) * q + round * Math.sqrt(q);
  };
  const bulge = (t: number) => Math.max(0, 1 - t * t);
  const topShare = Math.min(
    MAX_UPPER_SHARE,
    full.openTop / Math.max(1e-6, full.openTop + full.openBottom),
  );
  const closes = LIP_CLOSURES.has(viseme);
  const closedAtRest = opensAtRest(rest);
  // Only a photo whose lips are apart at rest has a dark of its own to part in (a closed photo's
  // dark line between its lips is no opening).
  const ownDark = closedAtRest ? teeth.darkMiddle : undefined;
  const innerU = (t: number) => rest.innerMin + ((t + 1) / 2) * (rest.innerMax - rest.innerMin);

  /**
   * The inner edges at t, in the photo and in this shape: the upper lip with the photo's upper
   * teeth below it, the parting at the teeth's lower edge, the lower lip with the jaw.
   */
  const inner = (t: number) => {
    const u = innerU(t);
    const upper = rest.upperInner.at(u);
    const lower = Math.max(upper, rest.lowerInner.at(u));
    // The parting: at the teeth's lower edge, or in the middle of the photo's own dark below
    // them where it shows some (the photo's dark, half with each lip, is the new opening's rim).
    const teethEdge = Math.max(upper, teeth.bottom.at(u));
    const edge = Math.min(lower, ownDark ? Math.max(teethEdge, ownDark.at(u)) : teethEdge);
    const gap = lower - upper;
    const corner = lift * t * t;
    const want = (full.openTop + full.openBottom) * k * OPENING_SCALE * profile(t);
    // Every shape but the lip closures (m, b, p; f, v) opens the dark below the teeth by a share
    // of its own opening at least (s and z part the teeth a little too); those close the lips.
    // And at least as much dark below the teeth as they are tall (see MIN_DARK_SHARE).
    const darkLeast = Math.min(
      want,
      Math.max(MIN_DARK_SHARE * want, edge - upper - (lower - edge)),
    );
    const wide = closes ? want : Math.max(want, gap + darkLeast);
    // From the photo's own gap, as a closed photo opens. Where the photo shows its lips apart
    // its rest is closed lips: the lip closures close from there, and every other shape opens
    // from closed lips to the photo's own opening over the first OPEN_RAMP of its openness,
    // then as far as a closed photo's would (measured from the closed rest, the cavity is as
    // deep as before: the astronaut's AA at 0.6 is the same sprite).
    const target = !closedAtRest
      ? gap + (wide - gap) * a
      : closes
        ? wide * a
        : (gap + (wide - gap) * a) * Math.min(1, a / OPEN_RAMP);
    let upperTo: number;
    let lowerTo: number;
    let edgeTo: number;
    let dark = 0;
    if (target >= gap) {
      const extra = target - gap;
      const rise = extra * topShare;
      upperTo = upper - rise;
      edgeTo = edge - rise;
      lowerTo = lower + extra - rise;
      dark = extra;
    } else {
      // Lips closing over what the photo shows between them: it is squashed between them.
      const close = gap - target;
      upperTo = upper + close * CLOSE_UPPER_SHARE;
      lowerTo = lower - close * (1 - CLOSE_UPPER_SHARE);
      edgeTo = upperTo + (gap > 0 ? ((edge - upper) * target) / gap : 0);
    }
    const shut = target <= 0.05 && gap >= CLOSED_GAP;
    return {
      u,
      uTo: u * widen,
      upper,
      lower,
      edge,
      upperTo: upperTo + corner,
      lowerTo: lowerTo + corner,
      edgeTo: edgeTo + corner,
      dark,
      /** The photo's teeth as shown in this shape (px). */
      teethShown: edgeTo - upperTo,
      /** The lips meet here over what the photo shows between them. */
      shut,
    };
  };
  const sealed = inner(0).shut;

  const mid = inner(0);
  const upperRise = mid.upper - mid.upperTo;
  const lowerDrop = mid.lowerTo - mid.lower;
  const points: ControlPoint[] = [];
  for (let i = 0; i < CONTOUR_SAMPLES; i++) {
    const t = -1 + (2 * i) / (CONTOUR_SAMPLES - 1);
    const corner = lift * t * t;
    const u = t * hw;
    const upperOuter = rest.upperOuter.at(u);
    const lowerOuter = rest.lowerOuter.at(u);
    points.push({
      from: { u, v: upperOuter },
      to: {
        u: u * widen,
        v: upperOuter - (upperRise + fullerTop) * bulge(t) + corner,
      },
    });
    if (i > 0 && i < CONTOUR_SAMPLES - 1) {
      points.push({
        from: { u, v: lowerOuter },
        to: { u: u * widen, v: lowerOuter + (lowerDrop + fullerBottom) * bulge(t) + corner },
      });
    }
    const p = inner(t);
    const atCorner = i === 0 || i === CONTOUR_SAMPLES - 1;
    // Sealed, each lip meets the other a little inside its inner edge: the edge itself, as a
    // landmark places it, may hold a sliver of the teeth or dark beside it.
    const inset = sealed && !atCorner ? seamInset(mid.lower - mid.upper) : 0;
    const upperFlesh = sealed ? Math.min(p.upper, teeth.lipEdges.upper.at(p.u)) : p.upper;
    const lowerFlesh = sealed ? Math.max(p.lower, teeth.lipEdges.lower.at(p.u)) : p.lower;
    points.push({
      from: { u: p.u, v: upperFlesh - inset },
      to: { u: p.uTo, v: p.upperTo },
      ...(sealed && !atCorner ? { side: 'upper' as const } : {}),
    });
    if (atCorner) continue;
    points.push({
      from: { u: p.u, v: lowerFlesh + inset },
      to: { u: p.uTo, v: p.lowerTo },
      ...(sealed ? { side: 'lower' as const } : {}),
    });
    // Lips sealed: nothing of the photo between them shows, so nothing there steers the warp.
    if (sealed) continue;
    // The parting at the teeth's lower edge, once for each side of it.
    if (p.edge - p.upper >= CLOSED_GAP) {
      points.push({ from: { u: p.u, v: p.edge - 0.01 }, to: { u: p.uTo, v: p.edgeTo } });
    }
    if (p.lower - p.edge >= CLOSED_GAP) {
      points.push({
        from: { u: p.u, v: p.edge + 0.01 },
        to: { u: p.uTo, v: p.edgeTo + p.dark },
      });
    }
  }
  // Sealed, the lips close over the teeth at the corners too: from the last fifth of the inner
  // contour to each outer corner (the landmarks' inner corner may lie on the upper lip above a
  // smile's teeth, sample6's by 2 to 5 px, and short of the outer corner), each lip's own edge
  // meets the line between the lips. Closed only on the inner contour, a speck of tooth stayed.
  const cornerSeam: { u: number; v: number }[] = [];
  if (sealed) {
    const inset = seamInset(mid.lower - mid.upper);
    for (const side of [-1, 1] as const) {
      const corner = inner(side);
      const cornerTo = { u: corner.uTo, v: (corner.upperTo + corner.lowerTo) / 2 };
      const outerU = side * hw;
      const outerTo = { u: outerU * widen, v: rest.upperOuter.at(outerU) + lift };
      // The teeth found about the corner, below the line between the lips: the lower lip's edge
      // below them meets the upper lip's on the line (within the inner contour, where that
      // shape's lips meet; past it, on the line from the inner corner to the outer one).
      for (const c of teeth.cornerTeeth) {
        // Only where teeth show: elsewhere the corner's own shade stays as the photo has it.
        if (Math.sign(c.u) !== side || c.bottom - c.line < CLOSED_GAP) continue;
        const beyond = (c.u - corner.u) / (outerU - corner.u);
        const p = inner(((c.u - rest.innerMin) / (rest.innerMax - rest.innerMin)) * 2 - 1);
        const to =
          beyond > 0
            ? { u: c.u * widen, v: cornerTo.v + (outerTo.v - cornerTo.v) * Math.min(1, beyond) }
            : { u: p.uTo, v: (p.upperTo + p.lowerTo) / 2 };
        const upper = beyond > 0 ? c.line : Math.min(c.line, teeth.lipEdges.upper.at(c.u));
        const lower = beyond > 0 ? c.bottom : Math.max(c.bottom, teeth.lipEdges.lower.at(c.u));
        points.push(
          { from: { u: c.u, v: upper - inset }, to, side: 'upper' },
          { from: { u: c.u, v: lower + inset }, to, side: 'lower' },
        );
        if (beyond > 0) cornerSeam.push(to);
      }
      if (cornerSeam.some((p) => Math.sign(p.u) === side)) cornerSeam.push(outerTo);
    }
  }
  const lipDrop = Math.max(0, lowerDrop);
  // Lips closing over an open photo's gap: the jaw carries the lower lip up (negative drop).
  const jawDrop =
    lowerDrop < 0
      ? Math.max(lowerDrop * CLOSING_CHIN_SHARE, -MAX_JAW_SHARE * (chinV - rest.noseBase))
      : Math.min(
          maxJawDrop,
          Math.max(
            lipDrop,
            Math.min(lipDrop * CHIN_SHARE, MAX_JAW_SHARE * (chinV - rest.noseBase)),
          ),
        );
  for (const j of rest.jaw) {
    points.push({
      from: { u: j.u, v: j.v },
      to: { u: j.u, v: j.v + jawDrop * (JAW_FOLLOW[j.index] ?? 0) },
    });
  }

  // The new gap: below the upper teeth (or lip), above what the jaw carries down.
  const upper: { u: number; v: number }[] = [];
  const lower: { u: number; v: number }[] = [];
  const shown: { u: number; v: number }[] = [];
  const seam: { u: number; v: number }[] = [];
  let open = false;
  const n = 17;
  for (let i = 0; i < n; i++) {
    const t = -1 + (2 * i) / (n - 1);
    const p = inner(t);
    if (p.dark > 0.05) open = true;
    upper.push({ u: p.uTo, v: p.edgeTo });
    lower.push({ u: p.uTo, v: p.edgeTo + p.dark });
    shown.push({ u: p.uTo, v: p.teethShown });
    seam.push({ u: p.uTo, v: (p.upperTo + p.lowerTo) / 2 });
  }
  const uMin = rest.innerMin * widen;
  const uMax = rest.innerMax * widen;
  return {
    points,
    opening: open
      ? {
          upper: new Curve(upper),
          lower: new Curve(lower),
          photoTeeth: new Curve(shown),
          inOwnDark: ownDark !== undefined,
          overOwnDark: ownDark === undefined && teeth.bottomOverDark,
          uMin,
          uMax,
          halfSpan: (uMax - uMin) / 2,
        }
      : null,
    seam: sealed
      ? {
          line: new Curve([...seam, ...cornerSeam]),
          uMin,
          uMax,
          sideMin: Math.min(uMin, ...cornerSeam.map((p) => p.u)),
          sideMax: Math.max(uMax, ...cornerSeam.map((p) => p.u)),
        }
      : null,
    jawDrop,
    scale: k,
    shape,
  };
}

/**
 * How far inside each lip's inner edge sealed lips meet (px), for a photo whose lips are `gap` px
 * apart in the middle: the same all along, for the landmarks' inner contour runs inside the
 * teeth towards the corners of a smile (Franck's, frame 3909: slivers of teeth stayed there).
 */
function seamInset(gap: number): number {
  return Math.min(2, Math.max(0.75, 0.1 * gap));
}

/**
 * Whether the photo shows its lips apart (taken mid-word, or a smile with teeth): then its mouth
 * at rest is closed lips, made from it, not the photo's own.
 */
export function opensAtRest(rest: MouthShapeAtRest): boolean {
  const chinV = rest.jaw.find((j) => j.index === 8)?.v ?? rest.noseBase;
  const gap = rest.lowerInner.at(0) - rest.upperInner.at(0);
  return gap > Math.max(CLOSED_GAP, OPEN_AT_REST_SHARE * (chinV - rest.noseBase));
}

/**
 * How far the photo's mouth smiles: how much lower the middle of its lips is than its corners
 * (px, 0 for a straight or down-turned mouth).
 */
export function photoSmile(rest: MouthShapeAtRest): number {
  const middle = (rest.upperInner.at(0) + rest.lowerInner.at(0)) / 2;
  const corners = (rest.upperOuter.at(-rest.halfWidth) + rest.upperOuter.at(rest.halfWidth)) / 2;
  return Math.max(0, middle - corners);
}

/** The photo's smile as a share of a broad one (a tenth of the mouth's width). */
function photoSmileShare(rest: MouthShapeAtRest): number {
  return Math.min(1, photoSmile(rest) / (0.1 * 2 * rest.halfWidth));
}

/** How much of the photo's smile a shape lets go: most for o and u, least for a smiling e or i. */
function smileRelax(shapeSmile: number): number {
  return 0.15 + 0.55 * Math.min(1, Math.max(0, (REST.smile + 1 - shapeSmile) / (REST.smile + 2)));
}
