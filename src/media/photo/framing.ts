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

export function chooseFraming(landmarks: readonly Point[], width: number, height: number): Framing {
  const eyes = mean([mean(landmarks, LEFT_EYE), mean(landmarks, RIGHT_EYE)], [0, 1]);
  let size = jawWidth(landmarks) / JAW_SHARE;
  size = Math.min(size, width, height);
  const x = Math.min(width - size, Math.max(0, eyes.x - EYES_AT.x * size));
  let y = Math.min(height - size, Math.max(0, eyes.y - EYES_AT.y * size));
  const chin = at(landmarks, CHIN);
  const below = chin.y + CHIN_ROOM * distance(chin, at(landmarks, NOSE_TIP));
  if (below > y + size) y = Math.min(below - size, height - size + BEYOND_BOTTOM * size);
  return { x, y, size };
}

/** Picture coordinates to frame coordinates (frame pixels, 0..512). */
export function toFrame(framing: Framing, p: Point): Point {
  const k = FRAME_WIDTH / framing.size;
  return { x: (p.x - framing.x) * k, y: (p.y - framing.y) * k };
}
