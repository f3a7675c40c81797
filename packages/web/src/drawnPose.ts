// SPDX-License-Identifier: Apache-2.0
import type { FaceTimeline } from '@visage-avatar/client/face';
import type { FacePose } from './faceComposer.js';

/** Interpolate `lift` and `lid` only between lines this close (ticks are 40 ms, parked 200). */
const MAX_INTERPOLATION_MS = 250;

/**
 * The face to draw at sender time `senderMs`: the line in force, its breathing and lids eased
 * towards the next line, and its mouth shut if a `cut` at `cutAt` came between the line and now
 * (an interrupt stops the mouth at once, before the sender's corrected lines arrive).
 */
export function drawnPose(
  timeline: FaceTimeline,
  senderMs: number,
  cutAt: number,
): FacePose | undefined {
  const face = timeline.at(senderMs);
  if (!face) return undefined;
  const lines = timeline.lines();
  const next = lines[lines.indexOf(face) + 1];
  let { lift, lid } = face;
  if (next && next.t - face.t <= MAX_INTERPOLATION_MS && next.t > face.t) {
    const k = (senderMs - face.t) / (next.t - face.t);
    lift += (next.lift - lift) * k;
    lid += (next.lid - lid) * k;
  }
  const cut = face.t < cutAt && senderMs >= cutAt;
  return {
    viseme: cut ? 'rest' : face.viseme,
    open: cut ? 0 : face.open,
    lid,
    gaze: face.gaze,
    sway: face.sway,
    lift,
  };
}
