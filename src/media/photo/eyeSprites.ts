// SPDX-License-Identifier: GPL-3.0-or-later
import type { Rect } from '../render/index.js';
import type { EyeShape, PhotoFace } from './photoFace.js';
import { evenRectAround } from './photoFace.js';
import { clamp, lerp, sampleInto, smoothstep, type FloatPicture } from './warp.js';

/**
 * The eye sprites of a photo: both eyes and brows, warped from the photo for each lid level and
 * gaze. A blink pulls the upper lid down over the eye by stretching the lid's own skin (from
 * halfway up to the brow, without its margin) down to the new lid edge, which carries a lash
 * line as dark as the photo's lashes: nothing of the eye shows through; the gaze shifts what is
 * between the lids (the iris) while the corners stay; the brows rise or settle by moving the
 * band between lid and forehead. Each warp fades out inside the sprite, so the sprite meets the
 * frame without a seam.
 */
export interface EyeLook {
  /** Upper lid, 0 open .. 1 closed. */
  lid: number;
  /** -1 (picture's left) .. 1, and down (0..1). */
  gazeX: number;
  gazeY: number;
  /** Catalogue brow drop, px of a 48 px wide eye: positive lowers, negative raises. */
  browDrop: number;
}

/** The catalogue's eyes are 48 px wide; their gaze and brow amounts scale with the eye. */
const CATALOGUE_EYE_WIDTH = 48;
/** Iris shift for a full sideways gaze, as a share of the eye's width. */
const GAZE_SHIFT = 0.085;
/** Iris shift for a full downward gaze, as a share of the opening's height. */
const GAZE_DROP = 0.22;
/**
 * The closing lid covers a little more than the landmarks' opening (they sit inside the real
 * lid edges): this much further down (share of the opening) and this much wider.
 */
const CLOSE_OVERSHOOT = 0.3;
const CLOSE_WIDEN = 1.3;
/** The lower share of the lid's skin (down to its edge) left out of a closing lid: the margin. */
const LID_MARGIN = 0.3;
/** The lash line: its thickness as a share of the eye's width (at least a pixel), opacity. */
const LASH_WIDTH = 0.045;
const LASH_OPACITY = 0.85;

/** The lash line of a closed lid: as dark as the photo's own lashes, and how thick. */
interface LashLine {
  colour: readonly [number, number, number];
  width: number;
}

/** The darkest quarter of the pixels along the upper lid's edge (its lashes), `offset` as above. */
function lashLine(canvas: FloatPicture, offset: number, eye: EyeShape): LashLine {
  const samples: [number, number, number][] = [];
  const px = new Float32Array(3);
  const width = eye.uMax - eye.uMin;
  for (let u = eye.uMin + 0.2 * width; u <= eye.uMax - 0.2 * width; u += 0.5) {
    for (let dv = -1.5; dv <= 0.5; dv += 0.5) {
      const q = eye.frame.toImage(u, eye.upper.at(u) + dv);
      sampleInto(canvas, q.x + offset, q.y + offset, px, 0);
      samples.push([px[0] as number, px[1] as number, px[2] as number]);
    }
  }
  samples.sort((a, b) => a[0] + a[1] + a[2] - (b[0] + b[1] + b[2]));
  const dark = samples.slice(0, Math.max(1, Math.floor(samples.length / 4)));
  const colour = [0, 1, 2].map((k) => dark.reduce((n, c) => n + c[k]!, 0) / dark.length) as [
    number,
    number,
    number,
  ];
  return { colour, width: Math.max(1, LASH_WIDTH * width) };
}

export function eyeSpriteRect(face: PhotoFace, margin: number): Rect {
  const points = [];
  for (const eye of [face.leftEye, face.rightEye]) {
    const width = eye.uMax - eye.uMin;
    const reach = bandReach(eye);
    for (const u of [
      Math.min(eye.uMin, eye.brow.first) - 0.35 * width,
      Math.max(eye.uMax, eye.brow.last) + 0.35 * width,
    ]) {
      points.push(eye.frame.toImage(u, reach.top));
      points.push(eye.frame.toImage(u, eye.lower.at(0) + 0.45 * width));
    }
  }
  return evenRectAround(points, 2, margin);
}

/** The vertical band a brow moves in: from halfway between lid and brow up to above the brow. */
function bandReach(eye: EyeShape): { top: number } {
  const gap = Math.max(2, eye.upper.at(0) - eye.brow.at(0));
  return { top: eye.brow.at(0) - 1.3 * gap };
}

export function renderEyeSprite(
  canvas: FloatPicture,
  offset: number,
  face: PhotoFace,
  rect: Rect,
  look: EyeLook,
): Float32Array {
  const { x: rx, y: ry, width: w, height: h } = rect;
  const out = new Float32Array(w * h * 3);
  const other = new Float32Array(3);
  const split = (face.leftEye.frame.origin.x + face.rightEye.frame.origin.x) / 2;
  const leftLashes = lashLine(canvas, offset, face.leftEye);
  const rightLashes = lashLine(canvas, offset, face.rightEye);
  for (let j = 0; j < h; j++) {
    for (let i = 0; i < w; i++) {
      const px = rx + i + 0.5;
      const py = ry + j + 0.5;
      const eye = px < split ? face.leftEye : face.rightEye;
      const f = eye.frame.toFace({ x: px, y: py });
      const o = (j * w + i) * 3;
      const src = eyeSource(eye, f.u, f.v, look);
      const q = eye.frame.toImage(src.u, src.v);
      sampleInto(canvas, q.x + offset, q.y + offset, out, o);
      if (src.edge === undefined) continue;
      // The lash line along the lid's edge: thickest in the middle of the eye.
      const lashes = eye === face.leftEye ? leftLashes : rightLashes;
      const thickness = lashes.width * (0.45 + 0.55 * Math.sqrt(src.across ?? 1));
      const lash = clamp(thickness + 0.5 - (src.edge - f.v), 0, 1) * LASH_OPACITY;
      for (let c = 0; c < 3; c++) {
        out[o + c] = lerp(out[o + c] as number, lashes.colour[c] as number, lash);
      }
      if (f.v < src.edge - 0.5) continue;
      // On the lid's edge: blend the lid and the eye below it by how much of the pixel each covers.
      const below = eyeSource(eye, f.u, f.v, { ...look, lid: 0 });
      const q2 = eye.frame.toImage(below.u, below.v);
      sampleInto(canvas, q2.x + offset, q2.y + offset, other, 0);
      const lidShare = clamp(src.edge - f.v + 0.5, 0, 1);
      for (let c = 0; c < 3; c++) {
        out[o + c] = (out[o + c] as number) * lidShare + (other[c] as number) * (1 - lidShare);
      }
    }
  }
  return out;
}

/**
 * Where the pixel at (u, v) of the eye in `look` comes from in the photo: brows first, then
 * the lid over the eye, then the eye under the lid (each a backward map of the previous).
 * `edge` (the closing lid's edge, v) is set when the pixel is on the closing lid, with `across`
 * (0 at the eye's corners, 1 in its middle).
 */
function eyeSource(
  eye: EyeShape,
  u: number,
  v: number,
  look: EyeLook,
): { u: number; v: number; edge?: number; across?: number } {
  const width = eye.uMax - eye.uMin;
  const k = width / CATALOGUE_EYE_WIDTH;
  let su = u;
  let sv = v;

  // Brows: a band from halfway between lid and brow up past the brow, moved as one.
  const lidEdge = eye.upper.at(clamp(u, eye.uMin, eye.uMax));
  const brow = eye.brow.at(u);
  const gap = Math.max(2, lidEdge - brow);
  const bandLow = lidEdge - 0.5 * gap;
  const bandHigh = brow - 1.3 * gap;
  const drop = (look.browDrop + look.lid * 1.5) * k * 0.9;
  if (drop !== 0 && sv < bandLow && sv > bandHigh) {
    const along =
      smoothstep(eye.brow.first - 0.35 * width, eye.brow.first, u) *
      smoothstep(eye.brow.last + 0.35 * width, eye.brow.last, u);
    const rise = sv > brow ? smoothstep(bandLow, brow, sv) : smoothstep(bandHigh, brow, sv);
    sv -= drop * along * rise;
  }

  // The upper lid: the skin from the band down to the lid edge stretches to the new edge.
  const centre = (eye.uMin + eye.uMax) / 2;
  const lidU = centre + (u - centre) / CLOSE_WIDEN;
  if (lidU > eye.uMin && lidU < eye.uMax && look.lid > 0) {
    const upper = eye.upper.at(lidU);
    const open = Math.max(0, eye.lower.at(lidU) - upper);
    // Past the lower lid by a share of the eye's full opening, tapering to the (widened) corners.
    const across = Math.sin((Math.PI * (lidU - eye.uMin)) / width);
    const tallest = Math.max(0, eye.lower.at(centre) - eye.upper.at(centre));
    const edge = upper + look.lid * (open + CLOSE_OVERSHOOT * tallest * Math.sqrt(across));
    const top = upper - 0.5 * Math.max(2, upper - eye.brow.at(u));
    // The lid's skin, without its margin and lashes (they are drawn as the lash line) nor
    // whatever of the eye shows above the landmarks: stretched down to the new edge.
    const skinEnd = upper - LID_MARGIN * (upper - top);
    if (sv > top && sv < edge + 0.5 && edge > upper) {
      const lidV = Math.min(sv, edge);
      return {
        u: su,
        v: top + ((lidV - top) * (skinEnd - top)) / (edge - top),
        edge,
        across,
      };
    }
  }

  // The eye itself: the iris moves with the gaze, the corners and lid edges stay.
  if (u > eye.uMin && u < eye.uMax && (look.gazeX !== 0 || look.gazeY !== 0)) {
    const upper = eye.upper.at(u);
    const lower = eye.lower.at(u);
    if (sv > upper && sv < lower) {
      const across = Math.sin((Math.PI * (u - eye.uMin)) / width);
      const down = Math.sin((Math.PI * (sv - upper)) / (lower - upper));
      const weight = across * down;
      su -= look.gazeX * GAZE_SHIFT * width * weight;
      sv -= look.gazeY * GAZE_DROP * (eye.lower.at(0) - eye.upper.at(0)) * weight;
    }
  }
  return { u: su, v: sv };
}
