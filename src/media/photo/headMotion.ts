// SPDX-License-Identifier: GPL-3.0-or-later
import { FRAME_HEIGHT, FRAME_WIDTH, type Rect } from '../render/index.js';
import type { PhotoFace } from './photoFace.js';
import { smoothstep, type FloatPicture } from './warp.js';

/**
 * Head sway and breathing for a photo: the whole frame for each (breath lift, sway) pair. The
 * head moves by exactly the pose's whole pixels (so the eye and mouth sprites, pasted at the
 * same offset, line up), the shoulders rise with the breath, and the movement fades smoothly
 * into the background over a wide band: no cut-out edge, no seam, just a picture that breathes.
 */
export interface MotionWeights {
  /** 1 on the head (both sprite rectangles included), 0 in the far background. */
  head: Float32Array;
  /** The head and the shoulders below it: what breathing lifts. */
  body: Float32Array;
}

/** Band over which the head's motion fades into the background, as a share of its radius. */
const HEAD_FADE = 0.7;

export function motionWeights(
  face: PhotoFace,
  sprites: readonly Rect[],
  reach: number,
): MotionWeights {
  const { frame, jawWidth } = face;
  const chin = frame.toFace(face.landmarks[8]!);
  // An ellipse around the face in its own frame, grown until it holds every sprite corner.
  const centreV = chin.v * 0.25;
  let a = jawWidth * 0.62;
  let b = chin.v * 1.05;
  const r = (u: number, v: number) => Math.hypot(u / a, (v - centreV) / b);
  let grow = 1;
  for (const s of sprites) {
    for (const x of [s.x - reach, s.x + s.width + reach]) {
      for (const y of [s.y - reach, s.y + s.height + reach]) {
        const f = frame.toFace({ x, y });
        grow = Math.max(grow, r(f.u, f.v) * 1.04);
      }
    }
  }
  a *= grow;
  b *= grow;
  const head = new Float32Array(FRAME_WIDTH * FRAME_HEIGHT);
  const body = new Float32Array(FRAME_WIDTH * FRAME_HEIGHT);
  for (let y = 0; y < FRAME_HEIGHT; y++) {
    for (let x = 0; x < FRAME_WIDTH; x++) {
      const f = frame.toFace({ x: x + 0.5, y: y + 0.5 });
      const wh = 1 - smoothstep(1, 1 + HEAD_FADE, r(f.u, f.v));
      // Shoulders: a wide band below the chin.
      const wb =
        (1 - smoothstep(jawWidth * 0.9, jawWidth * 1.9, Math.abs(f.u))) *
        smoothstep(chin.v * 0.6, chin.v * 1.1, f.v);
      head[y * FRAME_WIDTH + x] = wh;
      body[y * FRAME_WIDTH + x] = Math.max(wh, wb);
    }
  }
  return { head, body };
}

/**
 * The frame with the head moved `sway` px sideways and the figure lifted `lift` px. Each pixel is
 * `sampleInto`'s bilinear sample, written out here (12 frames of 512 x 512 a build: a fifth of the
 * build's JavaScript while it went through the call), with the same arithmetic in the same order:
 * the same values. Where the head moves by whole pixels (its weights 1) or not at all, a pixel is
 * a copy of one pixel of the canvas.
 */
export function renderPose(
  canvas: FloatPicture,
  offset: number,
  weights: MotionWeights,
  sway: number,
  lift: number,
): Float32Array {
  const out = new Float32Array(FRAME_WIDTH * FRAME_HEIGHT * 3);
  const { head, body } = weights;
  const { width: w, height: h, data } = canvas;
  const lastX = w - 1;
  const lastY = h - 1;
  for (let y = 0; y < FRAME_HEIGHT; y++) {
    for (let x = 0; x < FRAME_WIDTH; x++) {
      const p = y * FRAME_WIDTH + x;
      const sx = x + 0.5 - sway * (head[p] as number);
      const sy = y + 0.5 + lift * (body[p] as number);
      // sampleInto(canvas, sx + offset, sy + offset, out, p * 3):
      const fx = Math.min(lastX, Math.max(0, sx + offset - 0.5));
      const fy = Math.min(lastY, Math.max(0, sy + offset - 0.5));
      const x0 = Math.floor(fx);
      const y0 = Math.floor(fy);
      const ax = fx - x0;
      const ay = fy - y0;
      const a = (y0 * w + x0) * 3;
      const o = p * 3;
      if (ax === 0 && ay === 0) {
        // The blend's value on a pixel's centre (a picture's values are finite).
        out[o] = data[a] as number;
        out[o + 1] = data[a + 1] as number;
        out[o + 2] = data[a + 2] as number;
        continue;
      }
      const b = (y0 * w + Math.min(lastX, x0 + 1)) * 3;
      const c = (Math.min(lastY, y0 + 1) * w + x0) * 3;
      const d = (Math.min(lastY, y0 + 1) * w + Math.min(lastX, x0 + 1)) * 3;
      for (let k = 0; k < 3; k++) {
        const top =
          (data[a + k] as number) + ((data[b + k] as number) - (data[a + k] as number)) * ax;
        const bottom =
          (data[c + k] as number) + ((data[d + k] as number) - (data[c + k] as number)) * ax;
        out[o + k] = top + (bottom - top) * ay;
      }
    }
  }
  return out;
}
