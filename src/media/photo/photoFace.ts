// SPDX-License-Identifier: GPL-3.0-or-later
import { FRAME_HEIGHT, FRAME_WIDTH, type Rect } from '../render/index.js';
import { Curve } from './curve.js';
import {
  at,
  CHIN,
  distance,
  FaceFrame,
  JAW,
  LEFT_BROW,
  LEFT_EYE,
  mean,
  MOUTH_LEFT,
  MOUTH_RIGHT,
  NOSTRILS,
  RIGHT_BROW,
  RIGHT_EYE,
  type Point,
} from './landmarks.js';

/**
 * The parts of a face that move, measured from its landmarks in frame coordinates: each eye's
 * lids, the brows, the lips, the jaw; and the rectangles that the eye and mouth sprites cover.
 * Everything is in the face's own frame (`FaceFrame`: u across, v down the face), so a tilted
 * head opens its mouth along its own axis.
 */
export interface EyeShape {
  /** Frame at the eye's centre. */
  readonly frame: FaceFrame;
  /** Corner to corner along u. */
  readonly uMin: number;
  readonly uMax: number;
  /** Upper and lower lid edges, v(u). */
  readonly upper: Curve;
  readonly lower: Curve;
  /** The brow above the eye, v(u) (its lower edge, roughly). */
  readonly brow: Curve;
}

export interface MouthShapeAtRest {
  /** Frame at the mouth's centre (midway between the corners). */
  readonly frame: FaceFrame;
  /** Half the corner-to-corner width. */
  readonly halfWidth: number;
  readonly upperOuter: Curve;
  readonly lowerOuter: Curve;
  readonly upperInner: Curve;
  readonly lowerInner: Curve;
  /** Inner corners along u. */
  readonly innerMin: number;
  readonly innerMax: number;
  /** The jaw points 3..13 (face coordinates) and the chin, which drop as the jaw opens. */
  readonly jaw: readonly { index: number; u: number; v: number }[];
  /** The nostrils' lowest point (v): nothing above it moves with the mouth. */
  readonly noseBase: number;
}

export interface PhotoFace {
  /** The 68 landmarks in frame coordinates. */
  readonly landmarks: readonly Point[];
  readonly frame: FaceFrame;
  readonly jawWidth: number;
  readonly leftEye: EyeShape;
  readonly rightEye: EyeShape;
  readonly mouth: MouthShapeAtRest;
}

export function photoFace(landmarks: readonly Point[]): PhotoFace {
  const frame = FaceFrame.of(landmarks);
  return {
    landmarks,
    frame,
    jawWidth: distance(at(landmarks, JAW[0]!), at(landmarks, JAW[16]!)),
    leftEye: eyeShape(landmarks, frame, LEFT_EYE, LEFT_BROW),
    rightEye: eyeShape(landmarks, frame, RIGHT_EYE, RIGHT_BROW),
    mouth: mouthShape(landmarks, frame),
  };
}

function eyeShape(
  landmarks: readonly Point[],
  face: FaceFrame,
  eye: readonly number[],
  brow: readonly number[],
): EyeShape {
  const frame = face.at(mean(landmarks, eye));
  const p = (i: number) => frame.toFace(at(landmarks, i));
  const [c0, t1, t2, c1, b2, b1] = eye.map(p) as [
    ReturnType<typeof p>,
    ReturnType<typeof p>,
    ReturnType<typeof p>,
    ReturnType<typeof p>,
    ReturnType<typeof p>,
    ReturnType<typeof p>,
  ];
  return {
    frame,
    uMin: Math.min(c0.u, c1.u),
    uMax: Math.max(c0.u, c1.u),
    upper: new Curve([c0, t1, t2, c1]),
    lower: new Curve([c0, b1, b2, c1]),
    brow: new Curve(brow.map(p)),
  };
}

function mouthShape(landmarks: readonly Point[], face: FaceFrame): MouthShapeAtRest {
  const centre = mean(landmarks, [MOUTH_LEFT, MOUTH_RIGHT]);
  const frame = face.at(centre);
  const p = (i: number) => frame.toFace(at(landmarks, i));
  const curve = (indices: number[]) => new Curve(indices.map(p));
  const left = p(MOUTH_LEFT);
  const right = p(MOUTH_RIGHT);
  const innerLeft = p(60);
  const innerRight = p(64);
  return {
    frame,
    halfWidth: (right.u - left.u) / 2,
    upperOuter: curve([48, 49, 50, 51, 52, 53, 54]),
    lowerOuter: curve([48, 59, 58, 57, 56, 55, 54]),
    upperInner: curve([60, 61, 62, 63, 64]),
    lowerInner: curve([60, 67, 66, 65, 64]),
    innerMin: innerLeft.u,
    innerMax: innerRight.u,
    jaw: [3, 4, 5, 6, 7, CHIN, 9, 10, 11, 12, 13].map((index) => ({ index, ...p(index) })),
    noseBase: Math.max(...NOSTRILS.map((i) => p(i).v)),
  };
}

/**
 * The rectangle around image points, grown by `pad`, with even position and size, kept
 * `margin` px inside the frame.
 */
export function evenRectAround(points: readonly Point[], pad: number, margin: number): Rect {
  let x0 = Infinity;
  let y0 = Infinity;
  let x1 = -Infinity;
  let y1 = -Infinity;
  for (const q of points) {
    x0 = Math.min(x0, q.x);
    y0 = Math.min(y0, q.y);
    x1 = Math.max(x1, q.x);
    y1 = Math.max(y1, q.y);
  }
  const even = (v: number, up: boolean) => (up ? Math.ceil(v / 2) * 2 : Math.floor(v / 2) * 2);
  const left = Math.max(margin, even(x0 - pad, false));
  const top = Math.max(margin, even(y0 - pad, false));
  const right = Math.min(FRAME_WIDTH - margin, even(x1 + pad, true));
  const bottom = Math.min(FRAME_HEIGHT - margin, even(y1 + pad, true));
  return { x: left, y: top, width: right - left, height: bottom - top };
}
