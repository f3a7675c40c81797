// SPDX-License-Identifier: GPL-3.0-or-later
import { chooseFraming, fittingSize } from './framing.js';
import { isHumanFace, type FaceLimits } from './findFace.js';
import { LEFT_EYE, mean, RIGHT_EYE, distance, type Point } from './landmarks.js';
import { decodeFitted, turnRegion, type PhotoSource, type Region } from './photoImage.js';
import { inPadding, type PaddingCorner } from './photoPadding.js';
import type { PhotoThreadPool } from './photoThreadPool.js';

/**
 * A tilted head is turned upright before the frame is cut, instead of being refused: the part
 * of the picture around the face is turned against the head's roll, and the face is found again
 * in it (the landmark net places the points of an upright face best). A small tilt is kept as
 * it is (it looks natural, and turning resamples the photo).
 */
export const UPRIGHT_BEYOND_DEG = 15;
/**
 * What the turned part holds around the eyes, as shares of the frame's side: the frame's square
 * (the eyes at 40 % of its height, framing.ts) with the canvas's margin, and below it as far as
 * the chin's room can move the square down.
 */
const HOLDS = { across: 0.54, above: 0.44, below: 0.99 };

export interface UprightFace {
  /** The turned part of the picture, to cut the frame from. */
  source: PhotoSource;
  /** The face's landmarks in it. */
  landmarks: Point[];
  /**
   * Whether a point of it lies in the photo (the turn brings in corners from outside it), and
   * not in the photo's own flat corners (photoPadding.ts).
   */
  inPicture: (p: Point) => boolean;
  /** The frame's least side (framing.ts): the one it would have had in the photo as it is. */
  least: number;
  /** How far it was turned, clockwise, and which square of the original picture it is. */
  degrees: number;
  region: Region;
}

/** The face turned upright, or undefined where its roll is within UPRIGHT_BEYOND_DEG. */
export async function turnUpright(
  source: PhotoSource,
  landmarks: readonly Point[],
  rollDeg: number,
  pool: PhotoThreadPool,
  options: {
    detectionSide: number;
    limits: FaceLimits;
    /** The photo's flat corners (photoPadding.ts): not the picture, filled from it. */
    padding?: readonly PaddingCorner[];
  },
): Promise<UprightFace | undefined> {
  if (Math.abs(rollDeg) <= UPRIGHT_BEYOND_DEG) return undefined;
  const eyes = mean([mean(landmarks, LEFT_EYE), mean(landmarks, RIGHT_EYE)], [0, 1]);
  const degrees = -rollDeg;
  const padding = options.padding ?? [];
  // In the photo: inside it, and not in a flat corner of a photo turned before it was uploaded
  // (what the frame would show of it is a wedge of one colour).
  const inSource = (p: Point) =>
    p.x >= 0 && p.y >= 0 && p.x <= source.width && p.y <= source.height && !inPadding(padding, p);
  // The frame's side in the upright face, as far as the photo covers its square (framing.ts):
  // the square's corners, turned back about the eyes, in the photo. The turned part is only as
  // large as that frame needs.
  const cos = Math.cos((degrees * Math.PI) / 180);
  const sin = Math.sin((degrees * Math.PI) / 180);
  const unturned = (p: Point) => {
    const dx = p.x - eyes.x;
    const dy = p.y - eyes.y;
    return { x: eyes.x + dx * cos + dy * sin, y: eyes.y - dx * sin + dy * cos };
  };
  const wanted = chooseFraming(landmarks, Infinity, Infinity).size;
  const least = Math.min(wanted, chooseFraming(landmarks, source.width, source.height).size);
  const frameSide = fittingSize(eyes, wanted, least, (p) => inSource(unturned(p)));
  // The turned part: the square about the eyes that holds HOLDS of the frame turned.
  const half = Math.max(
    ...[-HOLDS.across, HOLDS.across].flatMap((a) =>
      [-HOLDS.above, HOLDS.below].map((b) => {
        const p = unturned({ x: eyes.x + a * frameSide, y: eyes.y + b * frameSide });
        return Math.max(Math.abs(p.x - eyes.x), Math.abs(p.y - eyes.y));
      }),
    ),
  );
  const size = 2 * half;
  const region = { left: eyes.x - size / 2, top: eyes.y - size / 2, size };
  const turned = await turnRegion(source, region, degrees, padding);
  const moved = landmarks.map(turned.map);
  const inPicture = (p: Point) => inSource(turned.unmap(p));

  // The same face found again, upright: the human face nearest to where the turn put it.
  const picture = await decodeFitted(turned.source, options.detectionSide);
  const k = turned.source.width / picture.width;
  const faces = await pool.detect(picture.data, picture.width, picture.height);
  const movedEyes = mean([mean(moved, LEFT_EYE), mean(moved, RIGHT_EYE)], [0, 1]);
  const eyeSpan = distance(mean(moved, LEFT_EYE), mean(moved, RIGHT_EYE));
  let best: Point[] | undefined;
  let bestDistance = eyeSpan;
  for (const face of faces) {
    if (!isHumanFace(face, options.limits)) continue;
    const points = face.landmarks.map((p) => ({ x: p.x * k, y: p.y * k }));
    const d = distance(mean([mean(points, LEFT_EYE), mean(points, RIGHT_EYE)], [0, 1]), movedEyes);
    if (d < bestDistance) {
      best = points;
      bestDistance = d;
    }
  }
  return {
    source: turned.source,
    landmarks: best ?? moved,
    inPicture,
    least,
    degrees,
    region,
  };
}
