// SPDX-License-Identifier: GPL-3.0-or-later
import { FRAME_HEIGHT, type Rect } from '../render/index.js';
import type { FaceColours } from './faceColours.js';
import { NOSTRILS, at } from './landmarks.js';
import type { MouthPoseGeometry } from './mouthMotion.js';
import {
  interiorColour,
  interiorLook,
  teethOnLipCover,
  type InteriorLook,
} from './interiorColour.js';
import { grainAt } from './mouthInterior.js';
import type { PhotoTeeth } from './photoTeeth.js';
import { evenRectAround, type PhotoFace } from './photoFace.js';
import {
  clamp,
  lerp,
  sampleInto,
  smoothstep,
  splineKernels,
  ThinPlateSpline,
  type SplineKernels,
  type FloatPicture,
  type Vec,
} from './warp.js';

/**
 * The mouth sprites of a photo: the photo's own lower face, warped into each mouth shape by a
 * thin-plate spline through the moved lip contours and jaw (fixed at the sprite's border and
 * the nose), with a synthesized inside of the mouth wherever the lips part: a dark cavity in
 * the lips' own colour, upper and lower teeth lit like the whites of the eyes, a hint of tongue,
 * all following the light on the face.
 */

/** Spline grid step, px: the map is smooth, so it is evaluated on a grid and interpolated. */
const GRID = 3;
/** The warp fades to nothing over this many px inside the sprite's border (no seams). */
const BORDER_TAPER = 6;
/** Fixed points along the sprite's border, every this many px. */
const BORDER_STEP = 14;

/**
 * How soft one pixel of a picture is once resampled (a Gaussian's sigma, in that pixel's
 * widths): a picture scaled up by s has edges about this times s px wide in the frame.
 */
const PIXEL_SOFTNESS = 0.45;

/**
 * How much the synthesized inside of the mouth is softened (a Gaussian's sigma, frame px) for a
 * picture whose pixels became `photoScale` frame pixels: as soft as the photo around it. Drawn at
 * the frame's resolution into a small photo scaled up (Bill Murray's: 2.3 times), the cavity and
 * the teeth had the hard edges of a sticker on a soft picture. Nothing for a picture at or above
 * the frame's resolution: what is drawn there is as sharp as its pixels.
 */
export function interiorSoftness(photoScale: number): number {
  const s = Math.max(1, photoScale);
  return PIXEL_SOFTNESS * Math.sqrt(s * s - 1);
}

/**
 * The shadow between closed lips: its darkest (a share of the light) and its width (sigma). At
 * 0.22 the face detector read Franck's closed smile as apart (2.4 % of nose-to-chin, 2.2 % of
 * the frames closed); at 0.35 his m, b and p read closed (1.2 to 1.7 %). Darker (0.5) counts as
 * an open mouth's dark in measureMouthOpening: the sample6 crop's closed rest rose to 0.042.
 */
const SEAM_DARK = 0.35;
const SEAM_WIDTH = 0.015;
/** How much of the seam's shadow the red channel takes (a grey line read as painted). */
const SEAM_RED_SHARE = 0.7;

/** The sprite reaches this many times the chin's drop below the chin (the warp fades there). */
const BELOW_CHIN = 2.6;

/**
 * Where the frame ends near the chin (a close-up), the neck between the chin and the sprite's
 * edge may be squeezed to this share of its height at the least, never folded.
 */
const SQUEEZE_BELOW_CHIN = 1.6;

/**
 * The most the chin may drop for the neck below it, down to the frame's edge, to take the
 * squeeze (a close-up's chin sits near the frame's bottom: held there, the warp would fold).
 */
export function jawRoom(face: PhotoFace, margin: number): number {
  const { mouth } = face;
  const chin = mouth.jaw.find((j) => j.index === 8)!;
  const chinY = mouth.frame.toImage(0, chin.v).y;
  return Math.max(0, (FRAME_HEIGHT - margin - chinY - 0.1 * mouth.halfWidth) / SQUEEZE_BELOW_CHIN);
}

export function mouthSpriteRect(face: PhotoFace, maxJawDrop: number, margin: number): Rect {
  const { mouth } = face;
  const hw = mouth.halfWidth;
  const points = [];
  // Across the jaw (it flexes) and from the nose down past the dropped chin.
  const chin = mouth.jaw.find((j) => j.index === 8)!;
  const left = mouth.jaw[0]!;
  const right = mouth.jaw[mouth.jaw.length - 1]!;
  const top = mouth.noseBase + 0.15 * hw;
  const bottom = chin.v + maxJawDrop * BELOW_CHIN + 0.35 * hw;
  for (const u of [Math.min(left.u, -1.6 * hw), Math.max(right.u, 1.6 * hw)]) {
    for (const v of [top, bottom]) points.push(mouth.frame.toImage(u, v));
  }
  return evenRectAround(points, 2, margin);
}

/**
 * The spline kernel's values of the sprite's fixed points (its border and the nostrils, which
 * every sprite of a build shares) at its grid's points: computed for the first sprite of a face
 * and rect, then reused (the same numbers: a third to a half of a sprite's warp was these).
 */
function fixedKernels(
  face: PhotoFace,
  rect: Rect,
  fixed: readonly Vec[],
  gw: number,
  gh: number,
): SplineKernels {
  const key = `${rect.x},${rect.y},${rect.width},${rect.height}`;
  const kept = KERNELS.get(face);
  if (kept?.key === key) return kept.kernels;
  const points: Vec[] = [];
  for (let j = 0; j < gh; j++) {
    for (let i = 0; i < gw; i++)
      points.push({ x: rect.x + i * GRID + 0.5, y: rect.y + j * GRID + 0.5 });
  }
  const kernels = splineKernels(fixed, points, face.mouth.halfWidth);
  KERNELS.set(face, { key, kernels });
  return kernels;
}

/** fixedKernels per face (one build's), for its latest rect. */
const KERNELS = new WeakMap<PhotoFace, { key: string; kernels: SplineKernels }>();

export function renderMouthSprite(
  canvas: FloatPicture,
  offset: number,
  face: PhotoFace,
  rect: Rect,
  pose: MouthPoseGeometry,
  colours: FaceColours,
  teeth: PhotoTeeth,
  {
    softness = 0,
    grain = 0,
    greyDark = false,
    darkGain = 1,
  }: {
    softness?: number;
    grain?: number;
    /** The dark grey, as before issue 43 (a reference for measuring: PhotoBuildOptions). */
    greyDark?: boolean;
    /** The dark's chroma over the lips' (portraitDarkGain: once per build). */
    darkGain?: number;
  } = {},
): Float32Array {
  const { mouth } = face;
  const { x: rx, y: ry, width: w, height: h } = rect;
  const out = new Float32Array(w * h * 3);
  const fixed: Vec[] = [];
  for (let x = rx; x <= rx + w; x += BORDER_STEP) fixed.push({ x, y: ry }, { x, y: ry + h });
  for (let y = ry + BORDER_STEP; y < ry + h; y += BORDER_STEP) {
    fixed.push({ x: rx, y }, { x: rx + w, y });
  }
  for (const i of NOSTRILS) fixed.push(at(face.landmarks, i));
  const gw = Math.ceil(w / GRID) + 1;
  const gh = Math.ceil(h / GRID) + 1;
  const known = fixedKernels(face, rect, fixed, gw, gh);
  // The map on a grid (per pixel by bilinear interpolation), steered by the points of one side
  // of the lips' seam only (or by all of them where there is none).
  const grid = (side?: 'upper' | 'lower') => {
    const targets: Vec[] = [...fixed];
    const sources: Vec[] = [...fixed];
    for (const p of pose.points) {
      if (side && p.side && p.side !== side) continue;
      targets.push(mouth.frame.toImage(p.to.u, p.to.v));
      sources.push(mouth.frame.toImage(p.from.u, p.from.v));
    }
    const spline = new ThinPlateSpline(targets, sources, mouth.halfWidth, 2e-4);
    const gx = new Float32Array(gw * gh);
    const gy = new Float32Array(gw * gh);
    const q: Vec = { x: 0, y: 0 };
    for (let j = 0; j < gh; j++) {
      for (let i = 0; i < gw; i++) {
        const px = rx + i * GRID + 0.5;
        const py = ry + j * GRID + 0.5;
        spline.map(px, py, q, known, j * gw + i);
        gx[j * gw + i] = q.x - px;
        gy[j * gw + i] = q.y - py;
      }
    }
    return { gx, gy };
  };
  const seam = pose.seam;
  const above = grid(seam ? 'upper' : undefined);
  const below = seam ? grid('lower') : above;
  const seamShade = seam ? lipSeamShade(mouth.halfWidth, softness) : null;
  const seamPixel = new Float32Array(3);
  const opening = pose.opening;
  const look = interiorLook(colours, teeth, pose, greyDark, darkGain);
  const colour = new Float32Array(3);
  // Only pixels near the opening can show the inside of the mouth.
  const box = opening ? openingBox(mouth.frame, opening, look) : null;
  // The inside, drawn apart (premultiplied by its cover) to be softened like the photo.
  const inside = box ? new Float32Array(w * h * 3) : null;
  const cover = box ? new Float32Array(w * h) : null;
  for (let j = 0; j < h; j++) {
    const fj = j / GRID;
    const j0 = Math.min(gh - 2, Math.floor(fj));
    const ay = fj - j0;
    for (let i = 0; i < w; i++) {
      const fi = i / GRID;
      const i0 = Math.min(gw - 2, Math.floor(fi));
      const ax = fi - i0;
      const k00 = j0 * gw + i0;
      let dx = bilinear(above.gx, k00, gw, ax, ay);
      let dy = bilinear(above.gy, k00, gw, ax, ay);
      const edge = Math.min(i + 0.5, j + 0.5, w - i - 0.5, h - j - 0.5);
      const taper = smoothstep(0, BORDER_TAPER, edge);
      const px = rx + i + 0.5;
      const py = ry + j + 0.5;
      const o = (j * w + i) * 3;
      let shade = 1;
      let lowerColour = 0;
      if (seam && seamShade) {
        // Above the seam the upper lip's map, below it the lower lip's: a pixel's step between
        // the lips, widening beyond their inner corners into a smooth blend over the cheeks
        // (the two maps agree there: no seam in the skin).
        const f = mouth.frame.toFace({ x: px, y: py });
        const s = f.v - seam.line.at(clamp(f.u, seam.sideMin, seam.sideMax));
        const outside = Math.max(0, f.u - seam.sideMax, seam.sideMin - f.u);
        const wBelow = clamp(s / (1 + 2 * outside) + 0.5, 0, 1);
        const lx = bilinear(below.gx, k00, gw, ax, ay);
        const ly = bilinear(below.gy, k00, gw, ax, ay);
        if (outside > 0 || wBelow <= 0 || wBelow >= 1) {
          dx += (lx - dx) * wBelow;
          dy += (ly - dy) * wBelow;
        } else {
          // On the seam between the lips: each lip's own colour, mixed. Their maps, mixed, would
          // point between the lips, at the teeth the seam hides (a light line along it).
          sampleInto(canvas, px + lx * taper + offset, py + ly * taper + offset, seamPixel, 0);
          lowerColour = wBelow;
        }
        shade = seamShade(f.u, s, seam);
      }
      sampleInto(canvas, px + dx * taper + offset, py + dy * taper + offset, out, o);
      if (lowerColour > 0) {
        for (let c = 0; c < 3; c++) {
          out[o + c] = lerp(out[o + c] as number, seamPixel[c] as number, lowerColour);
        }
      }
      if (shade < 1) {
        // The shadow between lips is the lips' own red darkened, not grey: red keeps more.
        out[o] = (out[o] as number) * (1 - (1 - shade) * SEAM_RED_SHARE);
        out[o + 1] = (out[o + 1] as number) * shade;
        out[o + 2] = (out[o + 2] as number) * shade;
      }
      if (!opening || !box) continue;
      if (px < box.x0 || px > box.x1 || py < box.y0 || py > box.y1) continue;
      const f = mouth.frame.toFace({ x: px, y: py });
      if (f.u <= opening.uMin || f.u >= opening.uMax) continue;
      const top = opening.upper.at(f.u);
      const bottom = opening.lower.at(f.u);
      if (bottom - top <= 0) continue;
      const open = clamp(f.v - top + 0.5, 0, 1) * clamp(bottom - f.v + 0.5, 0, 1);
      const teethOver = teethOnLipCover(f, top, opening, look);
      const alpha = Math.max(open, teethOver);
      if (alpha <= 0) continue;
      interiorColour(f.u, f.v, top, bottom, opening, look, colour, px, py);
      cover![j * w + i] = alpha;
      for (let c = 0; c < 3; c++) inside![o + c] = (colour[c] as number) * alpha;
    }
  }
  if (inside && cover && box) {
    if (softness > 0.05) {
      // Only around the opening: nothing is drawn elsewhere.
      const reach = Math.ceil(softness * 3) + 1;
      const area = {
        x0: Math.max(0, Math.floor(box.x0 - rx) - reach),
        y0: Math.max(0, Math.floor(box.y0 - ry) - reach),
        x1: Math.min(w, Math.ceil(box.x1 - rx) + reach),
        y1: Math.min(h, Math.ceil(box.y1 - ry) + reach),
      };
      if (area.x1 > area.x0 && area.y1 > area.y0) {
        gaussianBlur(inside, w, 3, softness, area);
        gaussianBlur(cover, w, 1, softness, area);
      }
    }
    for (let k = 0; k < w * h; k++) {
      const a = cover[k] as number;
      if (a <= 0) continue;
      // The photo's own grain on what is drawn (a fixed pattern per frame pixel: no flicker).
      const noise = grain > 0 ? grain * a * grainAt(rx + (k % w), ry + Math.floor(k / w)) : 0;
      for (let c = 0; c < 3; c++) {
        out[k * 3 + c] =
          (out[k * 3 + c] as number) * (1 - a) + (inside[k * 3 + c] as number) + noise;
      }
    }
  }
  return out;
}

/**
 * Closed lips pressed together: a thin shadow along the line where they meet, as dark as the
 * lips' own fold, softened like the photo, fading towards the corners (where the lips' own
 * corner shadow is in the photo). A multiplier of the warped photo's pixel.
 */
function lipSeamShade(
  halfWidth: number,
  softness: number,
): (u: number, fromSeam: number, seam: NonNullable<MouthPoseGeometry['seam']>) => number {
  const sigma = Math.hypot(Math.max(0.6, SEAM_WIDTH * halfWidth), softness);
  return (u, fromSeam, seam) => {
    if (Math.abs(fromSeam) > sigma * 4) return 1;
    const t = ((u - seam.uMin) / (seam.uMax - seam.uMin)) * 2 - 1;
    const along = smoothstep(1.2, 0.8, Math.abs(t)) * (0.6 + 0.4 * (1 - Math.min(1, t * t)));
    return 1 - SEAM_DARK * along * Math.exp(-(fromSeam * fromSeam) / (2 * sigma * sigma));
  };
}

/**
 * A separable Gaussian blur of `sigma` px, in place, over the part `area` (x0, y0 inclusive,
 * x1, y1 exclusive) of an image `w` px wide of `channels` channels; pixels beyond the part's
 * edges count as its edge pixels.
 */
function gaussianBlur(
  img: Float32Array,
  w: number,
  channels: number,
  sigma: number,
  area: { x0: number; y0: number; x1: number; y1: number },
): void {
  const radius = Math.ceil(sigma * 3);
  const kernel = new Float32Array(radius * 2 + 1);
  let sum = 0;
  for (let i = -radius; i <= radius; i++) {
    kernel[i + radius] = Math.exp(-(i * i) / (2 * sigma * sigma));
    sum += kernel[i + radius] as number;
  }
  for (let i = 0; i < kernel.length; i++) kernel[i] = (kernel[i] as number) / sum;
  const { x0, y0, x1, y1 } = area;
  const line = new Float32Array(Math.max(x1 - x0, y1 - y0) * channels);
  // Along each row, then down each column: `at(l, x)` is where the line's x-th pixel starts.
  const pass = (lines: number, length: number, at: (l: number, x: number) => number) => {
    for (let l = 0; l < lines; l++) {
      for (let x = 0; x < length; x++) {
        for (let c = 0; c < channels; c++) line[x * channels + c] = img[at(l, x) + c] as number;
      }
      for (let x = 0; x < length; x++) {
        // Away from the line's ends no tap is clamped: the same sums without the clamping.
        const inside = x - radius >= 0 && x + radius <= length - 1;
        const start = at(l, x);
        for (let c = 0; c < channels; c++) {
          let acc = 0;
          if (inside) {
            for (let t = 0, k = (x - radius) * channels + c; t < kernel.length; t++) {
              acc += (kernel[t] as number) * (line[k] as number);
              k += channels;
            }
          } else {
            for (let t = -radius; t <= radius; t++) {
              const k = Math.min(length - 1, Math.max(0, x + t));
              acc += (kernel[t + radius] as number) * (line[k * channels + c] as number);
            }
          }
          img[start + c] = acc;
        }
      }
    }
  };
  pass(y1 - y0, x1 - x0, (row, x) => ((y0 + row) * w + x0 + x) * channels);
  pass(x1 - x0, y1 - y0, (col, y) => ((y0 + y) * w + x0 + col) * channels);
}

/** The frame-aligned box around the opening (and teeth resting on the lip), padded. */
function openingBox(
  frame: PhotoFace['mouth']['frame'],
  opening: NonNullable<MouthPoseGeometry['opening']>,
  look: InteriorLook,
): { x0: number; y0: number; x1: number; y1: number } {
  const pad = 2 + look.upperTeeth * look.teethOnLip;
  let x0 = Infinity;
  let y0 = Infinity;
  let x1 = -Infinity;
  let y1 = -Infinity;
  const n = 16;
  for (let i = 0; i <= n; i++) {
    const u = opening.uMin + ((opening.uMax - opening.uMin) * i) / n;
    for (const v of [opening.upper.at(u) - pad, opening.lower.at(u) + pad]) {
      const q = frame.toImage(u, v);
      x0 = Math.min(x0, q.x);
      y0 = Math.min(y0, q.y);
      x1 = Math.max(x1, q.x);
      y1 = Math.max(y1, q.y);
    }
  }
  return { x0: x0 - 2, y0: y0 - 2, x1: x1 + 2, y1: y1 + 2 };
}

function bilinear(g: Float32Array, k: number, gw: number, ax: number, ay: number): number {
  const a = g[k] as number;
  const b = g[k + 1] as number;
  const c = g[k + gw] as number;
  const d = g[k + gw + 1] as number;
  const top = a + (b - a) * ax;
  return top + (c + (d - c) * ax - top) * ay;
}
