// SPDX-License-Identifier: GPL-3.0-or-later
// Lip closure from the pixels between the lips (issue 43). The landmark gaps (face-api's inner-lip
// points, the face mesh's) cannot tell a real closed mouth from an open one: their ranges overlap
// on the portraits' own photographs (docs/photo-avatars.md). Here the landmarks only locate the
// mouth; what decides is what lies between the lips: teeth (as bright as the lips, less red) or the
// mouth's dark. Closed lips show at most a thin line where they meet. On the labelled real
// photographs it does not separate the two sets either (docs/photo-avatars.md, "Closure from the
// pixels"): a mouth open only in its middle reads narrower than a blurred closed lip line. Used
// one-sided, at 2 % of the mouth's width, it reads no real open mouth closed and 16 of 21 closed
// ones closed, where either landmark gap reads 6.

export interface Pt {
  x: number;
  y: number;
}

export interface LipPixelReading {
  /**
   * The median over the middle 60 % of the mouth's width of the tallest run of not-lip pixels
   * (teeth or dark) per column that crosses the inner-lip line, share of the mouth's width.
   */
  opening: number;
  /** The mouth's width (outer corners), picture pixels. */
  mouthWidth: number;
  /** Columns whose run is teeth in part: share of the measured columns. */
  teethColumns: number;
  /** Per column, per step across it (upper to lower): 0 lip, 1 teeth, 2 dark; with `mask`. */
  mask?: { columns: number; rows: number; classes: Uint8Array };
}

// The bounds below are the best found on the 33 labelled photographs of lipMeasure.slow.test.ts
// (a search over them, docs/photo-avatars.md): with them, one real open mouth still reads
// narrower than two closed ones.
/** Band around the inner-lip line that is searched, either side, share of the mouth's width. */
const BAND = 0.3;
/** A run counts where it reaches within this of the inner-lip line, share of the mouth's width. */
const NEAR_LINE = 0.06;
/** Dark: luma below this share of the lips' own luma (a run's pixels are weighed, see DARK_FULL). */
const DARK = 0.45;
/**
 * A pixel at or below this share of the lips' luma counts as a whole pixel of the mouth's dark, one
 * between it and DARK as a part: a blurred lip line then weighs as much as a sharp one.
 */
const DARK_FULL = 0.3;
/** Teeth, white: luma above this share of the lips' luma... */
const TEETH_LUMA = 0.9;
/** ...and redness ((R - G) / (R + G + B)) below this share of the lips' redness. */
const TEETH_REDNESS = 0.6;
/**
 * Or teeth as dim as the lips (yellowish, in shade, a video frame's): luma above this share of the
 * lips'...
 */
const DIM_TEETH_LUMA = 0.6;
/**
 * ...less red than the lips, and a colour (chromaticity r, g) this many times the lips' own spread
 * of colour away from theirs.
 */
const DIM_TEETH_DISTANCE = 2;
/** The least spread of the lips' chromaticity (a flat-coloured lip would make any pixel teeth). */
const LEAST_SPREAD = 0.008;

interface Rgb {
  r: number;
  g: number;
  b: number;
}

function sample(rgb: Uint8Array, width: number, height: number, x: number, y: number): Rgb {
  const cx = Math.min(width - 1.001, Math.max(0, x));
  const cy = Math.min(height - 1.001, Math.max(0, y));
  const x0 = Math.floor(cx);
  const y0 = Math.floor(cy);
  const fx = cx - x0;
  const fy = cy - y0;
  const at = (xx: number, yy: number, c: number) => rgb[(yy * width + xx) * 3 + c]!;
  const lerp = (c: number) =>
    (at(x0, y0, c) * (1 - fx) + at(x0 + 1, y0, c) * fx) * (1 - fy) +
    (at(x0, y0 + 1, c) * (1 - fx) + at(x0 + 1, y0 + 1, c) * fx) * fy;
  return { r: lerp(0), g: lerp(1), b: lerp(2) };
}

const luma = (p: Rgb) => 0.299 * p.r + 0.587 * p.g + 0.114 * p.b;
const redness = (p: Rgb) => (p.r - p.g) / Math.max(1, p.r + p.g + p.b);
const chromaticity = (p: Rgb) => {
  const sum = Math.max(1, p.r + p.g + p.b);
  return { r: p.r / sum, g: p.g / sum };
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Where a polyline (ordered along the mouth's axis) lies across it at `t` along it. */
function across(line: readonly Pt[], t: number, origin: Pt, u: Pt, n: Pt): number {
  const pts = line.map((p) => ({
    t: (p.x - origin.x) * u.x + (p.y - origin.y) * u.y,
    s: (p.x - origin.x) * n.x + (p.y - origin.y) * n.y,
  }));
  if (t <= pts[0]!.t) return pts[0]!.s;
  for (let i = 1; i < pts.length; i++) {
    const a = pts[i - 1]!;
    const b = pts[i]!;
    if (t <= b.t) return b.t === a.t ? b.s : a.s + ((t - a.t) / (b.t - a.t)) * (b.s - a.s);
  }
  return pts[pts.length - 1]!.s;
}

/**
 * Reads how far apart the lips are from the pixels between them. `landmarks` are dlib's 68 points
 * (face-api's order) in the picture's pixels; `rgb` is the picture, 3 bytes a pixel.
 */
export function lipPixelOpening(
  rgb: Uint8Array,
  width: number,
  height: number,
  landmarks: readonly Pt[],
  options: { mask?: boolean } = {},
): LipPixelReading {
  const lm = landmarks;
  if (lm.length < 68) throw new Error(`68 landmarks expected, got ${lm.length}`);
  const left = lm[48]!;
  const right = lm[54]!;
  const mouthWidth = Math.hypot(right.x - left.x, right.y - left.y);
  if (!(mouthWidth >= 4)) throw new Error(`a mouth ${mouthWidth} px wide cannot be read`);
  const u = { x: (right.x - left.x) / mouthWidth, y: (right.y - left.y) / mouthWidth };
  const n = { x: -u.y, y: u.x };
  const innerUpper = [60, 61, 62, 63, 64].map((i) => lm[i]!);
  const innerLower = [60, 67, 66, 65, 64].map((i) => lm[i]!);
  const outerUpper = [48, 49, 50, 51, 52, 53, 54].map((i) => lm[i]!);
  const outerLower = [48, 59, 58, 57, 56, 55, 54].map((i) => lm[i]!);
  const at = (t: number, s: number) =>
    sample(rgb, width, height, left.x + u.x * t + n.x * s, left.y + u.y * t + n.y * s);

  // The lips' own colour: the middle of each lip's body, between its outer and inner contour.
  const lip: Rgb[] = [];
  for (let k = 0.25; k <= 0.75; k += 0.05) {
    const t = k * mouthWidth;
    const upper = (across(outerUpper, t, left, u, n) + across(innerUpper, t, left, u, n)) / 2;
    const lower = (across(outerLower, t, left, u, n) + across(innerLower, t, left, u, n)) / 2;
    lip.push(at(t, upper), at(t, lower));
  }
  const lipLuma = median(lip.map(luma));
  const lipRedness = median(lip.map(redness));
  const lipChroma = lip.map(chromaticity);
  const meanChroma = {
    r: lipChroma.reduce((a, c) => a + c.r, 0) / lipChroma.length,
    g: lipChroma.reduce((a, c) => a + c.g, 0) / lipChroma.length,
  };
  const spread = Math.max(
    LEAST_SPREAD,
    Math.sqrt(
      lipChroma.reduce((a, c) => a + (c.r - meanChroma.r) ** 2 + (c.g - meanChroma.g) ** 2, 0) /
        lipChroma.length,
    ),
  );
  const isTeeth = (p: Rgb, y: number) => {
    if (y > TEETH_LUMA * lipLuma && redness(p) < TEETH_REDNESS * lipRedness) return true;
    const c = chromaticity(p);
    return (
      y > DIM_TEETH_LUMA * lipLuma &&
      c.r - c.g < meanChroma.r - meanChroma.g &&
      Math.hypot(c.r - meanChroma.r, c.g - meanChroma.g) > DIM_TEETH_DISTANCE * spread
    );
  };

  const runs: number[] = [];
  const classes: number[] = [];
  let rows = 0;
  let teeth = 0;
  // Half a picture pixel across the line: a lip line is one to three pixels.
  const step = 0.5;
  for (let t = 0.2 * mouthWidth; t <= 0.8 * mouthWidth; t += 1) {
    const mid = (across(innerUpper, t, left, u, n) + across(innerLower, t, left, u, n)) / 2;
    const band = BAND * mouthWidth;
    const near = NEAR_LINE * mouthWidth;
    let best = 0;
    let bestTeeth = false;
    let run = 0;
    let runTeeth = false;
    let runNear = false;
    rows = 0;
    for (let s = -band; s <= band + 1e-9; s += step) {
      const p = at(t, mid + s);
      const y = luma(p);
      const teethHere = isTeeth(p, y);
      const notLip = teethHere || y < DARK * lipLuma;
      const weight = teethHere ? 1 : Math.min(1, Math.max(0, (1 - y / lipLuma) / (1 - DARK_FULL)));
      if (options.mask) classes.push(teethHere ? 1 : notLip ? 2 : 0);
      rows++;
      if (notLip) {
        run += step * weight;
        runTeeth ||= teethHere;
        runNear ||= Math.abs(s) <= near;
      }
      if (!notLip || s + step > band + 1e-9) {
        if (runNear && run > best) {
          best = run;
          bestTeeth = runTeeth;
        }
        run = 0;
        runTeeth = false;
        runNear = false;
      }
    }
    runs.push(best);
    if (bestTeeth) teeth++;
  }
  return {
    opening: median(runs) / mouthWidth,
    mouthWidth,
    teethColumns: teeth / runs.length,
    ...(options.mask
      ? { mask: { columns: runs.length, rows, classes: Uint8Array.from(classes) } }
      : {}),
  };
}
