// SPDX-License-Identifier: GPL-3.0-or-later
import { FRAME_WIDTH } from '../render/index.js';
import { jawWidth } from './findFace.js';
import {
  at,
  CHIN,
  distance,
  LEFT_EYE,
  mean,
  NOSE_TIP,
  RIGHT_EYE,
  type Point,
} from './landmarks.js';

/**
 * Head-and-shoulders framing: which square of the picture becomes the 512x512 frame. The face
 * is scaled so that the jaw spans about a third of the frame, the eyes sit at 40 % of its
 * height, centred; the square stays inside the picture (the face moves off centre near an edge,
 * and a picture smaller than the square is zoomed into, the face then larger).
 *
 * The chin keeps room below it: the widest jaw drops the chin by about a fifth of the
 * nose-to-chin height, and the neck below it, down to the frame's edge, takes the squeeze
 * (mouthSprites.ts, jawRoom). A close-up cut just under the chin leaves it nowhere to go, so the
 * square moves down until it shows CHIN_ROOM of the nose-to-chin height below the chin: into the
 * picture where the picture goes on below the square (most close-ups are a little taller than
 * wide), past its bottom edge by at most BEYOND_BOTTOM of the square where it does not (what
 * lies below the picture is the picture mirrored at its edge: the neck, the collar).
 *
 * A frame cut from a tilted head's part of the picture turned upright (uprightFace.ts) keeps to
 * the photo the same way: `turned.inPicture` says which points of the turned part the photo
 * covers, and the square shrinks until its corners are in the photo, down to `turned.least` (the
 * side the frame would have had in the photo as it is: a tipped close-up's frame is no tighter
 * than an upright one's), instead of showing the turned part's corners, which lie outside the
 * photo (a tipped close-up's frame was mostly its edges' pixels repeated, in streaks); where even
 * that side does not fit, the corners show the photo mirrored at its edge. The chin's room below
 * takes the square past the photo's bottom edge (under the square's middle) by at most
 * BEYOND_BOTTOM of it, as above.
 */
const JAW_SHARE = 0.34;
const EYES_AT = { x: 0.5, y: 0.4 };
/** The frame shows this share of the nose-to-chin height below the chin, where it can. */
const CHIN_ROOM = 0.22;
/** The most of the square that may lie below the picture's bottom edge. */
const BEYOND_BOTTOM = 0.08;

/** The square of the picture (its pixels) that the frame shows. */
export interface Framing {
  x: number;
  y: number;
  size: number;
}

export function chooseFraming(
  landmarks: readonly Point[],
  width: number,
  height: number,
  turned?: { inPicture: (p: Point) => boolean; least: number },
): Framing {
  const eyes = mean([mean(landmarks, LEFT_EYE), mean(landmarks, RIGHT_EYE)], [0, 1]);
  let size = jawWidth(landmarks) / JAW_SHARE;
  size = Math.min(size, width, height);
  if (turned) size = fittingSize(eyes, size, Math.min(size, turned.least), turned.inPicture);
  const x = Math.min(width - size, Math.max(0, eyes.x - EYES_AT.x * size));
  let y = Math.min(height - size, Math.max(0, eyes.y - EYES_AT.y * size));
  const chin = at(landmarks, CHIN);
  const below = chin.y + CHIN_ROOM * distance(chin, at(landmarks, NOSE_TIP));
  if (below > y + size) {
    const lowest = Math.min(below - size, height - size + BEYOND_BOTTOM * size);
    if (!turned) y = lowest;
    else {
      // As far down as the room asks, while the middle of the square's bottom edge, less
      // BEYOND_BOTTOM, stays in the photo.
      const fits = (top: number) =>
        turned.inPicture({ x: x + size / 2, y: top + size * (1 - BEYOND_BOTTOM) });
      let lo = y;
      let hi = lowest;
      if (fits(hi)) lo = hi;
      for (let i = 0; i < 24 && hi - lo > 0.01; i++) {
        const mid = (lo + hi) / 2;
        if (fits(mid)) lo = mid;
        else hi = mid;
      }
      y = Math.max(y, lo);
    }
  }
  return { x, y, size };
}

/**
 * The largest side up to `size`, at least `least`, of the frame's square around `eyes` (the eyes
 * at EYES_AT of it) whose corners are all `inPicture`.
 */
export function fittingSize(
  eyes: Point,
  size: number,
  least: number,
  inPicture: (p: Point) => boolean,
): number {
  const fits = (s: number) =>
    squareCorners(eyes.x - EYES_AT.x * s, eyes.y - EYES_AT.y * s, s, s).every(inPicture);
  if (fits(size)) return size;
  let lo = least;
  let hi = size;
  if (!fits(lo)) return lo;
  for (let i = 0; i < 24 && hi - lo > 0.01; i++) {
    const mid = (lo + hi) / 2;
    if (fits(mid)) lo = mid;
    else hi = mid;
  }
  return lo;
}

const squareCorners = (x: number, y: number, width: number, height: number): Point[] => [
  { x, y },
  { x: x + width, y },
  { x, y: y + height },
  { x: x + width, y: y + height },
];

/** Picture coordinates to frame coordinates (frame pixels, 0..512). */
export function toFrame(framing: Framing, p: Point): Point {
  const k = FRAME_WIDTH / framing.size;
  return { x: (p.x - framing.x) * k, y: (p.y - framing.y) * k };
}
