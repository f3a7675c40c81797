import { FRAME_WIDTH } from '../render/index.js';
import { jawWidth } from './findFace.js';
import { LEFT_EYE, mean, RIGHT_EYE, type Point } from './landmarks.js';

/**
 * Head-and-shoulders framing: which square of the picture becomes the 512x512 frame. The face
 * is scaled so that the jaw spans about a third of the frame, the eyes sit at 40 % of its
 * height, centred; the square stays inside the picture (the face moves off centre near an edge,
 * and a picture smaller than the square is zoomed into, the face then larger).
 */
const JAW_SHARE = 0.34;
const EYES_AT = { x: 0.5, y: 0.4 };

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
  const y = Math.min(height - size, Math.max(0, eyes.y - EYES_AT.y * size));
  return { x, y, size };
}

/** Picture coordinates to frame coordinates (frame pixels, 0..512). */
export function toFrame(framing: Framing, p: Point): Point {
  const k = FRAME_WIDTH / framing.size;
  return { x: (p.x - framing.x) * k, y: (p.y - framing.y) * k };
}
