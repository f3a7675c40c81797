import { chooseFraming } from './framing.js';
import { isHumanFace, type FaceLimits } from './findFace.js';
import { LEFT_EYE, mean, RIGHT_EYE, distance, type Point } from './landmarks.js';
import { decodeFitted, turnRegion, type PhotoSource, type Region } from './photoImage.js';
import type { PhotoThreadPool } from './photoThreadPool.js';

/**
 * A tilted head is turned upright before the frame is cut, instead of being refused: the part
 * of the picture around the face is turned against the head's roll, and the face is found again
 * in it (the landmark net places the points of an upright face best). A small tilt is kept as
 * it is (it looks natural, and turning resamples the photo).
 */
export const UPRIGHT_BEYOND_DEG = 15;
/** The turned part's side, as a share of the frame's (the frame's square turned fits inside). */
const REGION_SHARE = 1.6;

export interface UprightFace {
  /** The turned part of the picture, to cut the frame from. */
  source: PhotoSource;
  /** The face's landmarks in it. */
  landmarks: Point[];
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
  options: { detectionSide: number; limits: FaceLimits },
): Promise<UprightFace | undefined> {
  if (Math.abs(rollDeg) <= UPRIGHT_BEYOND_DEG) return undefined;
  const eyes = mean([mean(landmarks, LEFT_EYE), mean(landmarks, RIGHT_EYE)], [0, 1]);
  const framing = chooseFraming(landmarks, Infinity, Infinity);
  const size = framing.size * REGION_SHARE;
  const region = { left: eyes.x - size / 2, top: eyes.y - size / 2, size };
  const degrees = -rollDeg;
  const turned = await turnRegion(source, region, degrees);
  const moved = landmarks.map(turned.map);

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
  return { source: turned.source, landmarks: best ?? moved, degrees, region };
}
