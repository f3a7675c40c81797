// SPDX-License-Identifier: Apache-2.0
import { GAZES, i420Size, SWAY_OFFSETS, VISEMES, type Atlas } from './atlas.js';
import {
  composeFrame,
  frameParts,
  liftSteps,
  mouthLevel,
  mouthSpriteIndex,
  nearestLid,
  LID_LEVELS,
  type FrameParts,
} from './composition.js';

export type { FrameParts };

/** What a frame shows: the drawing fields of a `face` line. */
export interface FacePose {
  viseme: string;
  open: number;
  lid: number;
  gaze: string;
  sway: number;
  lift: number;
}

/**
 * Composes frames from an atlas as the server's renderer does: copy the pose, add the breathing
 * blend for a fractional lift, paste the eye sprite, then the mouth sprite (both moved with the
 * head), and converts the I420 result to RGBA for a canvas. A frame whose parts did not change is
 * not composed again.
 */
export class FaceComposer {
  readonly i420: Uint8Array;
  readonly rgba: Uint8ClampedArray;
  private lastKey = '';

  constructor(readonly atlas: Atlas) {
    this.i420 = new Uint8Array(i420Size(atlas.width, atlas.height));
    this.rgba = new Uint8ClampedArray(atlas.width * atlas.height * 4);
  }

  /** Composes `pose` into `i420` and `rgba`; false when they already show it. */
  compose(pose: FacePose): boolean {
    const parts = framePartsOf(pose);
    const key = `${parts.pose}/${parts.step}/${parts.eye}/${parts.mouth}`;
    if (key === this.lastKey) return false;
    this.lastKey = key;
    const { atlas, i420 } = this;
    composeFrame(atlas, i420, atlas.width, atlas.height, parts);
    i420ToRgba(i420, atlas.width, atlas.height, this.rgba);
    return true;
  }
}

/** Which atlas parts draw `pose` (the documented indices; unknown names fall back to rest). */
export function framePartsOf(pose: FacePose): FrameParts {
  const { level, step } = liftSteps(Number.isFinite(pose.lift) ? Math.max(0, pose.lift) : 0);
  const sway = Math.max(0, SWAY_OFFSETS.indexOf(pose.sway as -1 | 0 | 1));
  const gaze = Math.max(0, (GAZES as readonly string[]).indexOf(pose.gaze));
  const viseme = Math.max(0, (VISEMES as readonly string[]).indexOf(pose.viseme));
  const eye = gaze * LID_LEVELS.length + nearestLid(pose.lid);
  return frameParts(level, step, sway, eye, mouthSpriteIndex(viseme, mouthLevel(pose.open)));
}

/** BT.601 limited range to RGBA, 16.16 fixed point (opaque). */
export function i420ToRgba(i420: Uint8Array, w: number, h: number, out: Uint8ClampedArray): void {
  const cw = (w + 1) >> 1;
  const uOff = w * h;
  const vOff = uOff + cw * ((h + 1) >> 1);
  for (let j = 0; j < h; j++) {
    const crow = (j >> 1) * cw;
    for (let i = 0; i < w; i++) {
      const c = crow + (i >> 1);
      const y = ((i420[j * w + i] as number) - 16) * 76309;
      const u = (i420[uOff + c] as number) - 128;
      const v = (i420[vOff + c] as number) - 128;
      const k = (j * w + i) * 4;
      out[k] = (y + 104597 * v + 32768) >> 16;
      out[k + 1] = (y - 25675 * u - 53279 * v + 32768) >> 16;
      out[k + 2] = (y + 132201 * u + 32768) >> 16;
      out[k + 3] = 255;
    }
  }
}
