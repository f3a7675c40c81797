// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * The 68 face landmarks (the iBUG 300-W layout that face-api's landmark net predicts) and the
 * face's own coordinate frame. Indices: jaw 0-16 (8 the chin), brows 17-21 and 22-26, nose
 * bridge 27-30 (30 the tip), nostrils 31-35, eyes 36-41 and 42-47 (corners first and fourth),
 * outer lips 48-59 (48 and 54 the corners, 51 top, 57 bottom), inner lips 60-67 (60 and 64 the
 * corners, 62 top, 66 bottom). "Left" and "right" are as seen in the picture.
 */
export interface Point {
  x: number;
  y: number;
}

export const JAW = range(0, 16);
export const LEFT_BROW = range(17, 21);
export const RIGHT_BROW = range(22, 26);
export const NOSE_TIP = 30;
export const NOSTRILS = range(31, 35);
export const LEFT_EYE = range(36, 41);
export const RIGHT_EYE = range(42, 47);
export const CHIN = 8;
export const MOUTH_LEFT = 48;
export const MOUTH_RIGHT = 54;

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

export function mean(points: readonly Point[], indices: readonly number[]): Point {
  let x = 0;
  let y = 0;
  for (const i of indices) {
    x += at(points, i).x;
    y += at(points, i).y;
  }
  return { x: x / indices.length, y: y / indices.length };
}

export function at(points: readonly Point[], i: number): Point {
  const p = points[i];
  if (!p) throw new RangeError(`no landmark ${i}`);
  return p;
}

export function distance(a: Point, b: Point): number {
  return Math.hypot(a.x - b.x, a.y - b.y);
}

/**
 * The face's frame: `u` along the line from the left eye to the right eye, `v` perpendicular to
 * it, pointing down the face; both in pixels, from `origin`. A tilted head (roll) has tilted
 * axes, so everything drawn in face coordinates follows the tilt.
 */
export class FaceFrame {
  readonly ux: number;
  readonly uy: number;

  constructor(
    readonly origin: Point,
    /** Roll, radians: positive when the right eye sits lower than the left. */
    readonly roll: number,
  ) {
    this.ux = Math.cos(roll);
    this.uy = Math.sin(roll);
  }

  static of(landmarks: readonly Point[], origin?: Point): FaceFrame {
    const left = mean(landmarks, LEFT_EYE);
    const right = mean(landmarks, RIGHT_EYE);
    const roll = Math.atan2(right.y - left.y, right.x - left.x);
    return new FaceFrame(origin ?? { x: (left.x + right.x) / 2, y: (left.y + right.y) / 2 }, roll);
  }

  /** Face coordinates of an image point. */
  toFace(p: Point): { u: number; v: number } {
    const dx = p.x - this.origin.x;
    const dy = p.y - this.origin.y;
    return { u: dx * this.ux + dy * this.uy, v: -dx * this.uy + dy * this.ux };
  }

  /** The image point of face coordinates. */
  toImage(u: number, v: number): Point {
    return {
      x: this.origin.x + u * this.ux - v * this.uy,
      y: this.origin.y + u * this.uy + v * this.ux,
    };
  }

  /** The same frame with another origin (given in image coordinates). */
  at(origin: Point): FaceFrame {
    return new FaceFrame(origin, this.roll);
  }
}
