// SPDX-License-Identifier: GPL-3.0-or-later
import { FaceFrame, type Point } from './landmarks.js';

/**
 * The head's pose in a picture, from its 68 landmarks: the landmarks are fitted to a mean 3D
 * face (the 68-point mean face of the OpenFace project, millimetres, x to the picture's right,
 * y down, z away from the camera) under weak perspective (a rotation, one scale, a shift), by
 * Gauss-Newton on the three angles. The scale and shift have closed forms for each rotation.
 *
 * The fit uses the rigid parts of the face with most weight (eyes, nose), the brows and the
 * upper lip with less (they move with expressions), the jaw line least (its visible edge slides
 * round the head as it turns) and not the lower lip or the inner mouth (they move with speech).
 * Mirroring the picture negates yaw and roll and keeps pitch; scale does not matter; a rotation
 * in the picture's plane changes roll only.
 */
export interface HeadPose {
  /** Turned to the side: positive when the nose points to the picture's right. Degrees. */
  yawDeg: number;
  /** Nodded: positive when the face is tipped down (chin towards the chest). Degrees. */
  pitchDeg: number;
  /** Tilted in the picture's plane: positive clockwise (the right eye lower). Degrees. */
  rollDeg: number;
  /**
   * How well a human face explains the landmarks: the weighted RMS distance between the
   * landmarks and the fitted model, as a share of the distance between the eyes.
   */
  misfit: number;
}

/** The mean face, [x, y, z] per landmark (iBUG 68-point order). */
const MEAN_FACE: readonly (readonly [number, number, number])[] = [
  [-73.39, -29.8, 47.67],
  [-72.78, -10.95, 45.91],
  [-70.53, 7.93, 44.84],
  [-66.85, 26.07, 43.14],
  [-59.79, 42.56, 38.64],
  [-48.37, 56.48, 30.75],
  [-34.12, 67.25, 18.46],
  [-17.88, 75.06, 3.61],
  [0.1, 77.06, -0.88],
  [17.48, 74.76, 5.18],
  [32.65, 66.93, 19.18],
  [46.37, 56.31, 30.77],
  [57.34, 42.42, 37.63],
  [64.39, 25.46, 40.89],
  [68.21, 6.99, 42.28],
  [70.49, -11.67, 44.14],
  [71.38, -30.37, 47.14],
  [-61.12, -49.36, 14.25],
  [-51.29, -58.77, 7.27],
  [-37.8, -62.0, 0.44],
  [-24.02, -61.03, -6.61],
  [-11.64, -56.69, -11.97],
  [12.06, -57.39, -12.05],
  [25.11, -61.9, -7.32],
  [38.34, -62.78, -1.02],
  [51.19, -59.3, 5.35],
  [60.05, -50.19, 11.62],
  [0.65, -42.19, -13.38],
  [0.8, -30.99, -21.15],
  [0.99, -19.94, -29.28],
  [1.23, -8.41, -36.95],
  [-14.77, 2.6, -20.13],
  [-7.18, 4.75, -23.54],
  [0.56, 6.56, -25.94],
  [8.27, 4.66, -23.7],
  [15.21, 2.64, -20.86],
  [-46.05, -37.47, 7.04],
  [-37.67, -42.73, 3.02],
  [-27.88, -42.71, 1.35],
  [-19.65, -36.75, -0.11],
  [-28.27, -35.13, -0.15],
  [-38.08, -34.92, 1.48],
  [19.27, -37.03, -0.67],
  [27.89, -43.34, 0.25],
  [37.44, -43.11, 1.7],
  [45.17, -38.09, 4.89],
  [38.2, -35.53, 0.28],
  [28.76, -35.48, -1.17],
  [-28.92, 28.61, -2.24],
  [-17.53, 22.17, -15.93],
  [-6.68, 19.03, -22.61],
  [0.38, 20.72, -23.75],
  [8.38, 19.04, -22.72],
  [18.88, 22.39, -15.61],
  [28.79, 28.08, -3.22],
  [19.06, 36.3, -14.99],
  [8.96, 39.63, -22.55],
  [0.38, 40.4, -23.59],
  [-7.43, 39.84, -22.41],
  [-18.16, 36.68, -15.12],
  [-24.38, 28.68, -4.79],
  [-6.9, 25.48, -20.89],
  [0.34, 26.01, -22.22],
  [8.44, 25.33, -21.03],
  [24.47, 28.32, -5.71],
  [8.45, 30.6, -20.67],
  [0.21, 31.41, -21.9],
  [-7.2, 30.84, -20.33],
];

/** Each landmark's weight in the fit (see HeadPose). */
const WEIGHTS: readonly number[] = MEAN_FACE.map((_, i) => {
  if (i <= 16) return 0.25; // jaw line
  if (i <= 26) return 0.5; // brows
  if (i <= 35) return 1; // nose
  if (i <= 47) return 1; // eyes
  if (i <= 54) return 0.5; // corners and upper lip
  return 0; // lower lip, inner mouth
});

const DEG = 180 / Math.PI;

/**
 * The fitted pitch of a face that looks straight into the camera: the mean face's own frame
 * is tipped against a portrait's (its nose points up by this much). The median over the
 * tuning part of the labelled portrait set (docs/photo-portraits.md); reported pitch is
 * relative to it.
 */
const FRONTAL_PITCH_DEG = 14;

export function estimateHeadPose(landmarks: readonly Point[]): HeadPose {
  if (landmarks.length !== MEAN_FACE.length) {
    throw new RangeError(`head pose needs ${MEAN_FACE.length} landmarks, got ${landmarks.length}`);
  }
  const frame = FaceFrame.of(landmarks);
  // Angles: [yaw, pitch, roll] in radians, from an upright frontal head tilted as the eyes are.
  let angles = [0, 0, frame.roll];
  let lambda = 1e-3;
  let best = cost(landmarks, angles);
  for (let iteration = 0; iteration < 50; iteration++) {
    const step = gaussNewtonStep(landmarks, angles, lambda);
    const next = angles.map((a, k) => a + step[k]!);
    const nextCost = cost(landmarks, next);
    if (nextCost < best) {
      const gain = best - nextCost;
      angles = next;
      best = nextCost;
      lambda = Math.max(1e-6, lambda / 3);
      if (gain < 1e-10 * (1 + best)) break;
    } else {
      lambda *= 10;
      if (lambda > 1e6) break;
    }
  }
  const [yaw, pitch, roll] = angles as [number, number, number];
  const eyes = Math.hypot(
    meanOf(landmarks, 42, 47).x - meanOf(landmarks, 36, 41).x,
    meanOf(landmarks, 42, 47).y - meanOf(landmarks, 36, 41).y,
  );
  const totalWeight = WEIGHTS.reduce((n, w) => n + w, 0);
  return {
    yawDeg: -yaw * DEG,
    pitchDeg: pitch * DEG - FRONTAL_PITCH_DEG,
    rollDeg: wrapDeg(roll * DEG),
    misfit: Math.sqrt(best / totalWeight) / Math.max(1e-6, eyes),
  };
}

/** The weighted sum of squared distances between the landmarks and the fitted model. */
function cost(landmarks: readonly Point[], angles: readonly number[]): number {
  return residuals(landmarks, angles).reduce((n, r) => n + r * r, 0);
}

/**
 * The model rotated by yaw (about the vertical axis), then pitch (about the horizontal one),
 * then roll (in the picture's plane), projected, then scaled and shifted onto the landmarks at
 * their best (weighted least squares); the weighted residuals, x and y per landmark.
 */
function residuals(landmarks: readonly Point[], angles: readonly number[]): number[] {
  const projected = project(angles);
  let wSum = 0;
  let px = 0;
  let py = 0;
  let qx = 0;
  let qy = 0;
  for (let i = 0; i < projected.length; i++) {
    const w = WEIGHTS[i]!;
    wSum += w;
    px += w * landmarks[i]!.x;
    py += w * landmarks[i]!.y;
    qx += w * projected[i]!.x;
    qy += w * projected[i]!.y;
  }
  px /= wSum;
  py /= wSum;
  qx /= wSum;
  qy /= wSum;
  let pq = 0;
  let qq = 0;
  for (let i = 0; i < projected.length; i++) {
    const w = WEIGHTS[i]!;
    const ex = projected[i]!.x - qx;
    const ey = projected[i]!.y - qy;
    pq += w * ((landmarks[i]!.x - px) * ex + (landmarks[i]!.y - py) * ey);
    qq += w * (ex * ex + ey * ey);
  }
  // A negative scale would be a mirrored face seen from behind: not a solution.
  const s = Math.max(0, pq / Math.max(1e-12, qq));
  const out: number[] = [];
  for (let i = 0; i < projected.length; i++) {
    const root = Math.sqrt(WEIGHTS[i]!);
    out.push(root * (landmarks[i]!.x - px - s * (projected[i]!.x - qx)));
    out.push(root * (landmarks[i]!.y - py - s * (projected[i]!.y - qy)));
  }
  return out;
}

/** One damped Gauss-Newton step on the angles (numerical Jacobian, 3 x 3 normal equations). */
function gaussNewtonStep(
  landmarks: readonly Point[],
  angles: readonly number[],
  lambda: number,
): number[] {
  const r0 = residuals(landmarks, angles);
  const h = 1e-5;
  const columns = [0, 1, 2].map((k) => {
    const moved = angles.map((a, j) => (j === k ? a + h : a));
    const r = residuals(landmarks, moved);
    return r.map((v, i) => (v - r0[i]!) / h);
  });
  const jtj = [0, 1, 2].map((a) =>
    [0, 1, 2].map((b) => dot(columns[a]!, columns[b]!) * (a === b ? 1 + lambda : 1)),
  );
  const jtr = [0, 1, 2].map((a) => -dot(columns[a]!, r0));
  return solve3(jtj, jtr);
}

function project(angles: readonly number[]): Point[] {
  const [yaw, pitch, roll] = angles as [number, number, number];
  const cy = Math.cos(yaw);
  const sy = Math.sin(yaw);
  const cp = Math.cos(pitch);
  const sp = Math.sin(pitch);
  const cr = Math.cos(roll);
  const sr = Math.sin(roll);
  return MEAN_FACE.map(([x, y, z]) => {
    // Yaw about y, then pitch about x (a positive pitch brings the nose tip down), then roll.
    const x1 = cy * x + sy * z;
    const z1 = -sy * x + cy * z;
    const y2 = cp * y - sp * z1;
    return { x: cr * x1 - sr * y2, y: sr * x1 + cr * y2 };
  });
}

function dot(a: readonly number[], b: readonly number[]): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

/** Cramer's rule; a singular system gives no step. */
function solve3(m: number[][], v: number[]): number[] {
  const det = (a: number[][]) =>
    a[0]![0]! * (a[1]![1]! * a[2]![2]! - a[1]![2]! * a[2]![1]!) -
    a[0]![1]! * (a[1]![0]! * a[2]![2]! - a[1]![2]! * a[2]![0]!) +
    a[0]![2]! * (a[1]![0]! * a[2]![1]! - a[1]![1]! * a[2]![0]!);
  const d = det(m);
  if (!Number.isFinite(d) || Math.abs(d) < 1e-18) return [0, 0, 0];
  return [0, 1, 2].map((k) => det(m.map((row, i) => row.map((x, j) => (j === k ? v[i]! : x)))) / d);
}

function meanOf(points: readonly Point[], from: number, to: number): Point {
  let x = 0;
  let y = 0;
  for (let i = from; i <= to; i++) {
    x += points[i]!.x;
    y += points[i]!.y;
  }
  return { x: x / (to - from + 1), y: y / (to - from + 1) };
}

function wrapDeg(d: number): number {
  return ((((d + 180) % 360) + 360) % 360) - 180;
}
