// SPDX-License-Identifier: GPL-3.0-or-later
import type { Curve } from './curve.js';
import { lipsAsSeen } from './lipsAsSeen.js';
import type { EyeShape, PhotoFace } from './photoFace.js';
import type { FloatPicture } from './warp.js';

/** An sRGB colour, 0..255 per channel (floats). */
export type Colour = readonly [number, number, number];

/**
 * The colours a synthesized mouth interior is shaded with, measured on the photo itself: the
 * lips (the cavity is a darkened lip colour), the whites of the eyes (teeth are lit like them),
 * and the light on either side of the mouth (a face lit from one side has a mouth lit so too).
 */
export interface FaceColours {
  lips: Colour;
  /**
   * The lips as a viewer's eye takes them in round an open mouth: the mean colour of the pixels
   * between the inner contours and the outer ones grown by LIPS_SEEN_GROWTH (shadows, highlights,
   * the hairs of a moustache, the skin at their edge) that are lips, not teeth or the dark of a
   * mouth open in the photo (lipsAsSeen, as test/support/mouthUpClose.ts measures the lips on a
   * frame): what a mouth's dark is held as warm as (mouthDark.ts, portraitDarkGain).
   */
  lipsSeen: Colour;
  sclera: Colour;
  /** The darkest of the eye openings (pupils, lashes): the photo's own black. */
  pupil: Colour;
  /** Skin luma on the picture's left and right of the mouth. */
  lightLeft: number;
  lightRight: number;
  /**
   * The light parts of the lips and of the skin beside the mouth (the 95th percentile of their
   * luma): how much light reaches the mouth. Teeth in a dim photo are dim.
   */
  highlight: number;
}

/**
 * The outer lip contours grown by this many frame px for `lipsSeen`: where a face detector puts
 * them on a frame, and the chroma of the frame's I420 (half the resolution) spreads.
 */
const LIPS_SEEN_GROWTH = 1.5;

export function luma(r: number, g: number, b: number): number {
  return 0.299 * r + 0.587 * g + 0.114 * b;
}

/** `offset`: where frame pixel (0, 0) is in the canvas. */
export function measureFaceColours(
  canvas: FloatPicture,
  offset: number,
  face: PhotoFace,
): FaceColours {
  const { mouth } = face;
  const pixel = (x: number, y: number): Colour => {
    const i = Math.round(x + offset - 0.5);
    const j = Math.round(y + offset - 0.5);
    const k =
      (Math.min(canvas.height - 1, Math.max(0, j)) * canvas.width +
        Math.min(canvas.width - 1, Math.max(0, i))) *
      3;
    return [canvas.data[k] as number, canvas.data[k + 1] as number, canvas.data[k + 2] as number];
  };

  // Lips: between the outer and the inner contours.
  const lips: Colour[] = [];
  collectBetween(
    mouth.frame,
    -mouth.halfWidth,
    mouth.halfWidth,
    mouth.upperOuter,
    mouth.upperInner,
    pixel,
    lips,
  );
  collectBetween(
    mouth.frame,
    -mouth.halfWidth,
    mouth.halfWidth,
    mouth.lowerInner,
    mouth.lowerOuter,
    pixel,
    lips,
  );

  const seen: Colour[] = [];
  const grown = (curve: Curve, by: number) => ({ at: (u: number) => curve.at(u) + by });
  for (const [top, bottom] of [
    [grown(mouth.upperOuter, -LIPS_SEEN_GROWTH), mouth.upperInner],
    [mouth.lowerInner, grown(mouth.lowerOuter, LIPS_SEEN_GROWTH)],
  ] as const) {
    collectBetween(
      mouth.frame,
      -mouth.halfWidth - 1,
      mouth.halfWidth + 1,
      top,
      bottom,
      pixel,
      seen,
    );
  }

  // Whites of the eyes: the brightest part of each eye opening.
  const eyes: Colour[] = [];
  for (const eye of [face.leftEye, face.rightEye]) collectEye(eye, pixel, eyes);
  eyes.sort((a, b) => luma(...a) - luma(...b));
  const whites = eyes.slice(
    Math.floor(eyes.length * 0.85),
    Math.max(Math.floor(eyes.length * 0.97), Math.floor(eyes.length * 0.85) + 1),
  );
  // The photo's own black: the darkest tenth of the eye openings (pupils, lashes).
  const darkest = eyes.slice(0, Math.max(1, Math.ceil(eyes.length * 0.1)));

  // The lips and the cheeks beside the mouth (below): their light parts are the mouth's light.
  const lit: number[] = lips.map((c) => luma(...c));
  // Cheeks beside the mouth, for the direction of the light.
  const side = (sign: number) => {
    const samples: number[] = [];
    const u0 = sign * mouth.halfWidth * 1.45;
    const r = Math.max(2, mouth.halfWidth * 0.25);
    for (let du = -r; du <= r; du += 1) {
      for (let dv = -r; dv <= r; dv += 1) {
        const q = mouth.frame.toImage(u0 + du, -mouth.halfWidth * 0.35 + dv);
        samples.push(luma(...pixel(q.x, q.y)));
      }
    }
    lit.push(...samples);
    return median(samples);
  };
  const lightLeft = side(-1);
  const lightRight = side(1);
  lit.sort((a, b) => a - b);
  return {
    lips: middleColour(lips) ?? [150, 90, 90],
    lipsSeen: (seen.length ? lipsAsSeen(seen, 0) : undefined) ??
      middleColour(lips) ?? [150, 90, 90],
    sclera: middleColour(whites) ?? [225, 220, 215],
    pupil: middleColour(darkest) ?? [30, 25, 25],
    lightLeft,
    lightRight,
    highlight: lit.length ? (lit[Math.floor(lit.length * 0.95)] as number) : 200,
  };
}

function collectBetween(
  frame: PhotoFace['mouth']['frame'],
  u0: number,
  u1: number,
  top: Pick<Curve, 'at'>,
  bottom: Pick<Curve, 'at'>,
  pixel: (x: number, y: number) => Colour,
  out: Colour[],
): void {
  for (let u = u0 + 1; u < u1 - 1; u += 1) {
    const a = top.at(u);
    const b = bottom.at(u);
    for (let v = a + 0.5; v < b - 0.5; v += 1) {
      const q = frame.toImage(u, v);
      out.push(pixel(q.x, q.y));
    }
  }
}

function collectEye(eye: EyeShape, pixel: (x: number, y: number) => Colour, out: Colour[]): void {
  for (let u = eye.uMin + 1; u < eye.uMax - 1; u += 0.5) {
    const a = eye.upper.at(u);
    const b = eye.lower.at(u);
    for (let v = a + 0.5; v < b - 0.5; v += 0.5) {
      const q = eye.frame.toImage(u, v);
      out.push(pixel(q.x, q.y));
    }
  }
}

function median(values: number[]): number {
  if (values.length === 0) return 128;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

/** The mean colour of the middle half by brightness (steadier than one pixel); none of nothing. */
export function middleColour(colours: Colour[]): Colour | undefined {
  if (colours.length === 0) return undefined;
  const sorted = [...colours].sort((a, b) => luma(...a) - luma(...b));
  const from = Math.floor(sorted.length / 4);
  const to = Math.max(from + 1, Math.ceil((sorted.length * 3) / 4));
  const sum = [0, 0, 0];
  for (let i = from; i < to; i++) {
    const c = sorted[i] as Colour;
    sum[0]! += c[0];
    sum[1]! += c[1];
    sum[2]! += c[2];
  }
  const n = to - from;
  return [sum[0]! / n, sum[1]! / n, sum[2]! / n];
}
