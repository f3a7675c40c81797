// SPDX-License-Identifier: GPL-3.0-or-later
import { Curve } from './curve.js';
import { luma, middleColour, type Colour, type FaceColours } from './faceColours.js';
import type { MouthShapeAtRest } from './photoFace.js';
import type { FloatPicture } from './warp.js';

/**
 * What the photo shows between its lips: the upper teeth of a smile (a bright band hanging from
 * the upper lip's inner edge), and the dark of the mouth where it shows (the corners of a broad
 * smile, an open mouth). The mouth opens below the upper teeth: they belong to the skull and stay
 * with the upper lip, and the synthesized inside is shaded in the photo's own teeth and dark.
 */
export interface PhotoTeeth {
  /** The lower edge of the photo's upper teeth, v(u); the upper lip's inner edge where none show. */
  readonly bottom: Curve;
  /** Whether the photo shows teeth at all. */
  readonly shown: boolean;
  /** Their colour (the middle of their brightness), or the eyes' whites dimmed when none show. */
  readonly colour: Colour;
  /** The darkest of the inside of the mouth when the photo shows some, else undefined. */
  readonly dark: Colour | undefined;
  /**
   * The lips' own inner edges, v(u): where their flesh ends and the teeth or the dark begin. The
   * landmarks' inner contour may lie a few px inside the teeth (a thin upper lip over a broad
   * smile, Chuck Norris's); lips closed over the teeth meet at these edges instead.
   */
  readonly lipEdges: { upper: Curve; lower: Curve };
  /**
   * The middle of the photo's own dark below its teeth (the crescent between a smile's teeth and
   * its lower lip), v(u): the darkest row of each column, where most columns show one; else
   * undefined. An open mouth parts there (mouthMotion.ts): the photo's dark is the rim of the new
   * opening, not a dark shape drawn round it.
   */
  readonly darkMiddle: Curve | undefined;
  /**
   * Whether the teeth's edge (`bottom`) lies where they fade into the photo's dark below them
   * (FADED_COLUMNS): the part of the photo below it, moved down with the jaw, begins with that dark.
   */
  readonly bottomOverDark: boolean;
  /**
   * Teeth about the inner corners, out to the outer ones: per column (u), the line between the
   * lips there (`line`) and the lowest teeth below it (`bottom`, a pixel past the last one found,
   * where the lower lip shows below them; the line where none). The landmarks' inner corners may
   * lie on the upper lip above a smile's teeth (sample6's, 2 to 5 px above them) and short of the
   * outer corners; lips closed on the inner contour left a speck of tooth at a corner.
   */
  readonly cornerTeeth: readonly CornerTeeth[];
}

/** A column about an inner lip corner: the line between the lips, the teeth's bottom. */
export interface CornerTeeth {
  u: number;
  line: number;
  bottom: number;
}

/** Columns examined about each inner corner, evenly up to the outer corner. */
const CORNER_COLUMNS = 8;
/** From this share of the inner contour's width short of each inner corner. */
const CORNER_REACH = 0.2;
/**
 * Teeth are looked for within this share of the way down to the outer lip contour: at 0.8 the
 * light lower lip of Franck's smile (frame 3909) counted as teeth, and closed over, its lips no
 * longer read closed to face-api (12.1 % of the m, b, p sentence's frames, then 0).
 */
const CORNER_SCAN = 0.5;
/**
 * Teeth found about a corner count only where the lip shows below them within this many px past
 * the outer contour (sample6's right corner: 1.4 px past it, the landmarks' contour a little high).
 */
const LIP_BELOW_MARGIN = 2;

/** Teeth must be found in this many columns (px) to count. */
const MIN_TEETH_COLUMNS = 5;
/** A band brighter than the lips by this share of the eyes' whites over the lips is teeth. */
const TEETH_CONTRAST = 0.4;
/** Synthesized teeth are at least this light (eyes in shade would make grey teeth)... */
const MIN_TEETH_LUMA = 170;
/**
 * ...but no lighter than this many times the light parts of the lips and the skin beside the
 * mouth (`FaceColours.highlight`): real teeth in a dim photo are dim. Walter White's close-up
 * (skin luma 61, its light parts 80) had teeth at 167 against a near-black cavity, the inner lip
 * edge 4.53 times as steep as the outer one (real open mouths 0.93 to 2.97), and face-api
 * sample5's dark, smiling woman (skin 48, light parts 83) 5.35. At 1.3 times: 3.14 and 3.10.
 */
const TEETH_OVER_HIGHLIGHT = 1.15;
/** Upper teeth start in this share of the gap below the upper lip (further down: lower teeth). */
const UPPER_TEETH_START = 0.6;
/** Teeth must stand out from the lips by at least this much luma to count at all. */
const MIN_TEETH_CONTRAST = 18;
/**
 * Finding the lips' own inner edges: brighter than the lips by this share of the teeth over them
 * is teeth (or a pixel partly teeth), darker than this share of the lips is the mouth's dark.
 */
const EDGE_TEETH_SHARE = 0.25;
const EDGE_DARK_SHARE = 0.65;
/**
 * A column's darkest row between the teeth (or the upper lip) and the lower lip counts as the
 * photo's own dark below this share of the lips' luma (as `dark` below), and the photo has a dark
 * of its own to part in where at least DARK_MIDDLE_COLUMNS of the columns show one.
 */
const DARK_MIDDLE_SHARE = 0.55;
const DARK_MIDDLE_COLUMNS = 0.6;
/**
 * The teeth's edge is fitted where they fade into the dark below them when at least this share
 * of their columns shows one (a smile's teeth on the lower lip keep the edge of their light: any
 * shift of the astronaut's, 0.1 px, moved where a detector puts her open lips).
 */
const FADED_COLUMNS = 1 / 3;

/** `offset`: where frame pixel (0, 0) is in the canvas. */
export function measurePhotoTeeth(
  canvas: FloatPicture,
  offset: number,
  mouth: MouthShapeAtRest,
  colours: FaceColours,
): PhotoTeeth {
  const pixel = (u: number, v: number): Colour => {
    const q = mouth.frame.toImage(u, v);
    const i = Math.min(canvas.width - 1, Math.max(0, Math.round(q.x + offset - 0.5)));
    const j = Math.min(canvas.height - 1, Math.max(0, Math.round(q.y + offset - 0.5)));
    const k = (j * canvas.width + i) * 3;
    return [canvas.data[k] as number, canvas.data[k + 1] as number, canvas.data[k + 2] as number];
  };
  const lipLuma = luma(...colours.lips);
  // Every pixel strictly between the inner lip contours: their brightness decides what is teeth.
  const inside: Colour[] = [];
  const { innerMin, innerMax } = mouth;
  for (let u = innerMin + 1; u < innerMax - 1; u += 1) {
    const top = mouth.upperInner.at(u);
    const bottom = mouth.lowerInner.at(u);
    for (let v = top + 0.5; v < bottom - 0.5; v += 1) inside.push(pixel(u, v));
  }
  const lumas = inside.map((c) => luma(...c)).sort((a, b) => a - b);
  const bright = lumas.length ? (lumas[Math.floor(lumas.length * 0.9)] as number) : 0;
  const shown = lumas.length >= 12 && bright - lipLuma >= MIN_TEETH_CONTRAST;
  const threshold = lipLuma + TEETH_CONTRAST * (bright - lipLuma);

  // Per column, the lower end of the first bright run in the upper part of the gap (the upper
  // lip's inner edge may lie a few px above the teeth; a one-pixel dip is a tooth's edge).
  const found: { u: number; v: number; faded: number | undefined }[] = [];
  const columnLuma = (u: number, v: number) =>
    (luma(...pixel(u - 0.7, v)) + luma(...pixel(u, v)) + luma(...pixel(u + 0.7, v))) / 3;
  /**
   * Where a column's teeth, from their edge at `from`, have faded into the mouth's dark below
   * them (nearer that dark than the lips' luma), or undefined where the column shows no dark
   * above `to` (teeth on the lower lip, as the astronaut's). A parting at the teeth's edge, where
   * they are still 40 % bright, left their tips and their blur to go down with the jaw: a row of
   * light under the new opening's dark (face-api sample1 smiling: a light band between two darks
   * in 44 % of her columns, real mouths at most 19 %).
   */
  const fadedInto = (u: number, from: number, to: number): number | undefined => {
    let darkest = Infinity;
    for (let v = from; v < to; v += 0.5) darkest = Math.min(darkest, columnLuma(u, v));
    if (!(darkest < lipLuma * DARK_MIDDLE_SHARE)) return undefined;
    for (let v = from; v < to; v += 0.5) if (columnLuma(u, v) <= (darkest + lipLuma) / 2) return v;
    return undefined;
  };
  for (let u = innerMin + 1.5; shown && u < innerMax - 1.5; u += 1) {
    const top = mouth.upperInner.at(u);
    const bottom = Math.max(top, mouth.lowerInner.at(u));
    if (bottom - top < 2) continue;
    let brightest = 0;
    for (let v = top + 0.5; v < bottom; v += 0.5) brightest = Math.max(brightest, columnLuma(u, v));
    if (brightest - lipLuma < MIN_TEETH_CONTRAST) continue;
    const threshold = lipLuma + TEETH_CONTRAST * (brightest - lipLuma);
    let edge: number | undefined;
    let misses = 0;
    for (let v = top + 0.5; v < bottom; v += 0.5) {
      if (columnLuma(u, v) >= threshold) {
        if (edge === undefined && v - top > UPPER_TEETH_START * (bottom - top)) break;
        edge = v + 0.25;
        misses = 0;
      } else if (edge !== undefined && ++misses > 2) break;
    }
    if (edge === undefined) continue;
    const v = Math.min(bottom, edge);
    found.push({ u, v, faded: fadedInto(u, v, bottom) });
  }
  // A smooth edge through them (a parabola, least squares), kept between the lips. Where a third
  // of the columns or more show the mouth's dark below their teeth (FADED_COLUMNS), through where
  // the teeth have faded into it (fadedInto), and never above the edge through the teeth.
  const teethFit = found.length >= MIN_TEETH_COLUMNS ? parabola(found) : undefined;
  const intoDark = found.filter((p) => p.faded !== undefined).length;
  const fadedFit =
    teethFit && intoDark >= FADED_COLUMNS * found.length
      ? parabola(found.map((p) => ({ u: p.u, v: p.faded ?? p.v })))
      : undefined;
  const fit = teethFit && ((u: number) => Math.max(teethFit(u), fadedFit?.(u) ?? -Infinity));
  const points: { u: number; v: number }[] = [];
  const knots = 16;
  for (let i = 0; i <= knots; i++) {
    const u = innerMin + (i / knots) * (innerMax - innerMin);
    const top = mouth.upperInner.at(u);
    const bottom = Math.max(top, mouth.lowerInner.at(u));
    points.push({ u, v: fit ? Math.min(bottom, Math.max(top, fit(u))) : top });
  }

  // The lips' own inner edges: from each inner landmark contour into the lip, past whatever is
  // teeth-bright or mouth-dark, up to half the lip's thickness.
  // A pixel half teeth and half lip counts as teeth: nothing of them may stay between closed lips.
  const teethLike = lipLuma + EDGE_TEETH_SHARE * (bright - lipLuma);
  const notLip = (u: number, v: number) => {
    const l = columnLuma(u, v);
    return (shown && l >= teethLike) || l < lipLuma * EDGE_DARK_SHARE;
  };
  const upperEdge: { u: number; v: number }[] = [];
  const lowerEdge: { u: number; v: number }[] = [];
  for (let i = 0; i <= knots; i++) {
    const u = innerMin + (i / knots) * (innerMax - innerMin);
    const top = mouth.upperInner.at(u);
    const bottom = Math.max(top, mouth.lowerInner.at(u));
    let up = top;
    const upTo = top - 0.5 * Math.max(0, top - mouth.upperOuter.at(u));
    while (up - 0.5 >= upTo && notLip(u, up - 0.5)) up -= 0.5;
    let down = bottom;
    const downTo = bottom + 0.5 * Math.max(0, mouth.lowerOuter.at(u) - bottom);
    while (down + 0.5 <= downTo && notLip(u, down + 0.5)) down += 0.5;
    upperEdge.push({ u, v: up });
    lowerEdge.push({ u, v: down });
  }
  smoothEdge(upperEdge, Math.min);
  smoothEdge(lowerEdge, Math.max);

  const cornerTeeth = shown
    ? teethAboutCorners(mouth, (u, v) => columnLuma(u, v) >= teethLike)
    : [];

  // The photo's own dark below the teeth, its darkest row per column (the 3-column luma).
  const darkRows: { u: number; v: number }[] = [];
  for (let i = 0; i <= knots; i++) {
    const u = innerMin + (i / knots) * (innerMax - innerMin);
    const top = Math.max(mouth.upperInner.at(u), points[i]!.v);
    const bottom = Math.max(top, mouth.lowerInner.at(u));
    if (bottom - top < 2) continue;
    let darkest = Infinity;
    let at = 0;
    for (let v = top + 0.5; v < bottom; v += 0.5) {
      const l = columnLuma(u, v);
      if (l < darkest) [darkest, at] = [l, v];
    }
    if (darkest < lipLuma * DARK_MIDDLE_SHARE) darkRows.push({ u, v: at });
  }
  const teethPixels = inside.filter((c) => luma(...c) >= threshold);
  const darkPixels = inside
    .filter((c) => luma(...c) < lipLuma * 0.55)
    .sort((a, b) => luma(...a) - luma(...b));
  return {
    bottom: new Curve(points),
    shown: fit !== undefined,
    colour: (fit && middleColour(teethPixels)) || syntheticTeeth(colours),
    dark:
      darkPixels.length >= 6
        ? middleColour(darkPixels.slice(0, Math.ceil(darkPixels.length / 2)))
        : undefined,
    lipEdges: { upper: new Curve(upperEdge), lower: new Curve(lowerEdge) },
    darkMiddle:
      darkPixels.length >= 6 && darkRows.length >= DARK_MIDDLE_COLUMNS * (knots + 1)
        ? smoothCurve(darkRows, innerMin, innerMax, knots)
        : undefined,
    cornerTeeth,
    bottomOverDark: fadedFit !== undefined,
  };
}

/**
 * The teeth about each inner lip corner, out to the outer one: in columns from the last fifth of
 * the inner contour to the outer corner, the lowest pixel of teeth (`isTeeth`) between the line
 * between the lips (the inner contours' middle, then the line from the inner corner to the outer
 * one) and half the way down to the outer contour, with lip below it. Only below the line: above
 * it, over a thin upper lip, the skin may be as bright as teeth in shade.
 */
function teethAboutCorners(
  mouth: MouthShapeAtRest,
  isTeeth: (u: number, v: number) => boolean,
): CornerTeeth[] {
  const found: CornerTeeth[] = [];
  const { innerMin, innerMax } = mouth;
  const middle = (u: number) => (mouth.upperInner.at(u) + mouth.lowerInner.at(u)) / 2;
  const reach = CORNER_REACH * (innerMax - innerMin);
  const sides = [
    { inner: innerMin, from: innerMin + reach, outer: mouth.upperOuter.first },
    { inner: innerMax, from: innerMax - reach, outer: mouth.upperOuter.last },
  ];
  for (const { inner, from, outer } of sides) {
    const corner = middle(inner);
    const to = mouth.upperOuter.at(outer);
    for (let i = 0; i < CORNER_COLUMNS; i++) {
      const u = from + ((outer - from) * (i + 0.5)) / CORNER_COLUMNS;
      const beyond = (u - inner) / (outer - inner);
      const line = beyond > 0 ? corner + (to - corner) * beyond : middle(u);
      const downTo = line + CORNER_SCAN * Math.max(1, mouth.lowerOuter.at(u) - line);
      let last: number | undefined;
      for (let v = line; v <= downTo; v += 0.5) if (isTeeth(u, v)) last = v;
      // Teeth are a band with the lower lip below them: light all the way down past the outer
      // contour is the skin beyond the corner (the astronaut's, where the lip thins to nothing).
      let lipBelow = false;
      const lipTo = mouth.lowerOuter.at(u) + LIP_BELOW_MARGIN;
      for (let v = (last ?? lipTo) + 0.5; !lipBelow && v <= lipTo; v += 0.5)
        lipBelow = !isTeeth(u, v);
      found.push({ u, line, bottom: last !== undefined && lipBelow ? last + 1 : line });
    }
  }
  return found;
}

/**
 * An edge found column by column, made smooth: each knot the furthest into the lip of itself and
 * its neighbours (`furthest`: min up, max down), then the mean of three (no steps along the
 * line where closed lips meet).
 */
function smoothEdge(edge: { u: number; v: number }[], furthest: (...v: number[]) => number): void {
  const v = edge.map((p) => p.v);
  const spread = v.map((x, i) => furthest(x, v[i - 1] ?? x, v[i + 1] ?? x));
  for (let i = 0; i < edge.length; i++) {
    const a = spread[i - 1] ?? spread[i]!;
    const b = spread[i + 1] ?? spread[i]!;
    edge[i]!.v = (a + spread[i]! + b) / 3;
  }
}

/**
 * Teeth for a photo that shows none: the whites of the eyes, a little warmer, lightened towards
 * a warm white to at least the skin beside the mouth and MIN_TEETH_LUMA.
 */
function syntheticTeeth(colours: FaceColours): Colour {
  const warm: Colour = [
    colours.sclera[0] * 0.97,
    colours.sclera[1] * 0.94,
    colours.sclera[2] * 0.86,
  ];
  const skin = (colours.lightLeft + colours.lightRight) / 2;
  const target = Math.max(luma(...warm), 1.08 * skin, MIN_TEETH_LUMA);
  // Lighter towards a warm white, not a brighter grey.
  const t = Math.min(1, Math.max(0, (target - luma(...warm)) / Math.max(1, 236 - luma(...warm))));
  const white: Colour = [240, 232, 214];
  const teeth: Colour = [
    warm[0] + (white[0] - warm[0]) * t,
    warm[1] + (white[1] - warm[1]) * t,
    warm[2] + (white[2] - warm[2]) * t,
  ];
  // In the face's light: the same colour, dimmed (a dim photo's teeth are not grey or red).
  const k = Math.min(1, (TEETH_OVER_HIGHLIGHT * colours.highlight) / Math.max(1, luma(...teeth)));
  return [teeth[0] * k, teeth[1] * k, teeth[2] * k];
}

/** The least-squares parabola v(u) through points. */
function parabola(points: readonly { u: number; v: number }[]): (u: number) => number {
  // Normal equations of v = a + b u + c u^2, u centred and scaled for conditioning.
  const mu = points.reduce((n, p) => n + p.u, 0) / points.length;
  const su = Math.max(1, Math.max(...points.map((p) => Math.abs(p.u - mu))));
  const m = [
    [0, 0, 0, 0],
    [0, 0, 0, 0],
    [0, 0, 0, 0],
  ];
  for (const p of points) {
    const x = (p.u - mu) / su;
    const row = [1, x, x * x];
    for (let i = 0; i < 3; i++) {
      for (let j = 0; j < 3; j++) m[i]![j]! += row[i]! * row[j]!;
      m[i]![3]! += row[i]! * p.v;
    }
  }
  // Gaussian elimination with partial pivoting, a tiny ridge against too few distinct columns.
  for (let i = 0; i < 3; i++) m[i]![i]! += 1e-6;
  for (let c = 0; c < 3; c++) {
    let pivot = c;
    for (let r = c + 1; r < 3; r++) if (Math.abs(m[r]![c]!) > Math.abs(m[pivot]![c]!)) pivot = r;
    [m[c], m[pivot]] = [m[pivot]!, m[c]!];
    for (let r = 0; r < 3; r++) {
      if (r === c) continue;
      const f = m[r]![c]! / m[c]![c]!;
      for (let k = c; k < 4; k++) m[r]![k]! -= f * m[c]![k]!;
    }
  }
  const [a, b, c] = [0, 1, 2].map((i) => m[i]![3]! / m[i]![i]!) as [number, number, number];
  return (u: number) => {
    const x = (u - mu) / su;
    return a + b * x + c * x * x;
  };
}

/** A smooth curve through `rows` (a parabola, least squares), on `knots` + 1 points. */
function smoothCurve(
  rows: { u: number; v: number }[],
  from: number,
  to: number,
  knots: number,
): Curve {
  const fit = parabola(rows);
  const points: { u: number; v: number }[] = [];
  for (let i = 0; i <= knots; i++) {
    const u = from + (i / knots) * (to - from);
    points.push({ u, v: fit(u) });
  }
  return new Curve(points);
}
