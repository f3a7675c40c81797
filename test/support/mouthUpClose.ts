// SPDX-License-Identifier: GPL-3.0-or-later
// The mouth up close (issue 43, item 2): three figures of the inside of an open mouth that tell a
// photographed mouth from a painted one, measured on an RGB picture between the lip landmarks a
// face detector places on it (dlib's order: 48-59 the outer lip contour, 60-67 the inner).
// Measured alike on real photographs of open mouths (the range) and on rendered frames.
import sharp from 'sharp';
import { i420ToRgb, rgbToI420 } from '../../src/media/render/index.js';
import { describeFaces, describeImage } from './faceQuality.js';
import { inside, type Pt } from './polygon.js';

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
}

const lumaAt = (rgb: Uint8Array, k: number) =>
  0.299 * (rgb[k] as number) + 0.587 * (rgb[k + 1] as number) + 0.114 * (rgb[k + 2] as number);

/**
 * Along a closed contour (every half pixel), the largest luma change over 1 px on the contour's
 * normal within 2.5 px of it; the 90th percentile of these along the contour.
 */
function steepest(luma: Float32Array, width: number, height: number, poly: readonly Pt[]): number {
  const sample = (x: number, y: number) => {
    const fx = Math.min(width - 1.001, Math.max(0, x - 0.5));
    const fy = Math.min(height - 1.001, Math.max(0, y - 0.5));
    const i = Math.floor(fx);
    const j = Math.floor(fy);
    const ax = fx - i;
    const ay = fy - j;
    const k = j * width + i;
    const top = (luma[k] as number) * (1 - ax) + (luma[k + 1] as number) * ax;
    const bottom = (luma[k + width] as number) * (1 - ax) + (luma[k + width + 1] as number) * ax;
    return top * (1 - ay) + bottom * ay;
  };
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

/** The three figures of an RGB picture (`width` x `height`) around its 68 landmarks. */
export function upCloseFigures(
  rgb: Uint8Array,
  width: number,
  height: number,
  landmarks: readonly Pt[],
): UpCloseFigures {
  const luma = new Float32Array(width * height);
  for (let k = 0; k < width * height; k++) luma[k] = lumaAt(rgb, k * 3);
  const outer = landmarks.slice(48, 60);
  const inner = landmarks.slice(60, 68);
  const xs = inner.map((p) => p.x);
  const ys = inner.map((p) => p.y);
  const x0 = Math.max(1, Math.floor(Math.min(...xs)));
  const x1 = Math.min(width - 2, Math.ceil(Math.max(...xs)));
  const y0 = Math.max(1, Math.floor(Math.min(...ys)));
  const y1 = Math.min(height - 2, Math.ceil(Math.max(...ys)));
  let flat = 0;
  const pixels: { luma: number; saturation: number }[] = [];
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
      pixels.push({ luma: luma[y * width + x] as number, saturation: max ? (max - min) / max : 0 });
    }
  }
  pixels.sort((p, q) => p.luma - q.luma);
  const dark = pixels.slice(0, Math.max(1, Math.floor(pixels.length / 2)));
  const outerStep = steepest(luma, width, height, outer);
  return {
    flat: pixels.length ? flat / pixels.length : 0,
    edgeRatio: outerStep > 0 ? steepest(luma, width, height, inner) / outerStep : 0,
    darkSaturation: pixels.length ? dark.reduce((s, p) => s + p.saturation, 0) / dark.length : 0,
    pixels: pixels.length,
  };
}

export interface UpCloseRange {
  flat: [number, number];
  edgeRatio: [number, number];
  darkSaturation: [number, number];
}

/** The range of each figure over a set of measurements. */
export function rangeOf(figures: readonly UpCloseFigures[]): UpCloseRange {
  const span = (f: (x: UpCloseFigures) => number): [number, number] => [
    Math.min(...figures.map(f)),
    Math.max(...figures.map(f)),
  ];
  return {
    flat: span((f) => f.flat),
    edgeRatio: span((f) => f.edgeRatio),
    darkSaturation: span((f) => f.darkSaturation),
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
    const [photo] = await describeImage(bytes, 0.2);
    if (!photo) continue;
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
    const [face] = await describeFaces(rgb, width, height, 0.2);
    if (!face) continue;
    const figures = upCloseFigures(rgb, width, height, face.landmarks);
    if (figures.pixels >= MIN_OPENING_PIXELS) mouths.push({ name, figures });
  }
  return mouths;
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
  return failures;
}

const pct = (x: number) => `${(x * 100).toFixed(1)} %`;

/** The printed cells of one mouth's figures. */
export function upCloseRow(f: UpCloseFigures): Record<string, string> {
  return {
    'flat inside': pct(f.flat),
    'inner / outer edge': f.edgeRatio.toFixed(2),
    'dark saturation': f.darkSaturation.toFixed(2),
  };
}

/** The range as printed cells. */
export function rangeRow(r: UpCloseRange): Record<string, string> {
  return {
    'flat inside': `${pct(r.flat[0])} to ${pct(r.flat[1])}`,
    'inner / outer edge': `${r.edgeRatio[0].toFixed(2)} to ${r.edgeRatio[1].toFixed(2)}`,
    'dark saturation': `${r.darkSaturation[0].toFixed(2)} to ${r.darkSaturation[1].toFixed(2)}`,
  };
}
