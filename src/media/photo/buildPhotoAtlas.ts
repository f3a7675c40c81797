// SPDX-License-Identifier: GPL-3.0-or-later
import { VISEMES } from '../lipsync/viseme.js';
import {
  BREATH_LEVELS,
  FRAME_HEIGHT,
  FRAME_WIDTH,
  GAZES,
  i420ToRgb,
  LID_LEVELS,
  MOUTH_LEVELS,
  poseBlend,
  renderStill,
  rgbToI420,
  spriteSet,
  SWAY_OFFSETS,
  type AvatarAtlas,
  type PoseBlend,
  type Rect,
} from '../render/index.js';
import { eyeSpriteRect, renderEyeSprite } from './eyeSprites.js';
import { measureFaceColours } from './faceColours.js';
import { motionWeights, renderPose } from './headMotion.js';
import type { Point } from './landmarks.js';
import { mouthPose } from './mouthMotion.js';
import { interiorSoftness, jawRoom, mouthSpriteRect, renderMouthSprite } from './mouthSprites.js';
import { portraitDarkGain, reaimedDarkGain } from './mouthDark.js';
import { openMouthWarmth } from './openMouthWarmth.js';
import { photoFace } from './photoFace.js';
import { measurePhotoTeeth } from './photoTeeth.js';
import { measureMouthSurface } from './mouthInterior.js';
import { floatPicture, type FloatPicture } from './warp.js';

/**
 * A photo's atlas: the same shape as a catalogue avatar's (whole frames for breathing and sway,
 * eye sprites per gaze and lid, mouth sprites per viseme and openness), so the same renderer
 * pastes it at the same cost. Everything is drawn from the photo by warps (see headMotion,
 * eyeSprites, mouthSprites); nothing is drawn per frame.
 */

/** The canvas reaches this far past each side of the frame, so motion never samples an edge. */
export const CANVAS_MARGIN = 16;
export const CANVAS_SIZE = FRAME_WIDTH + 2 * CANVAS_MARGIN;
/** Sprites stay this far inside the frame (they are pasted up to a few px off their place). */
const SPRITE_MARGIN = 6;
/**
 * Sub-pixel breathing on a photo: most of the moving head differs a little between whole-pixel
 * poses (texture, grain). Differences under 6 levels are left out (half of one at most shows,
 * below the grain), which halves the work per frame.
 */
const PHOTO_BLEND = { minDelta: 6, joinGap: 1 };

/**
 * The inside's edge is this many times as wide as the lips' outer edge: the step from a lip to
 * the dark of the mouth is taller than from skin to lip, and at the outer edge's width it was
 * steeper than in real open mouths of the set (Bill Murray's, 3.2 times his outer edge's).
 */
const INNER_EDGE = 1.3;
/**
 * Lips whose outer edge is at least this soft (sigma, frame px) have an open mouth's inside
 * softened as they are even in a photo at or above the frame's resolution: face-api sample3
 * smiling (1.2 px) kept a drawn edge sharper than any real mouth's (inner / outer steepest step
 * 4.06, real 0.93 to 2.97; softened 1.38). Not lower: sample6's largest face cut out (1.1 px), a
 * smile's thin opening, softened read less open at AA 0.6 than at rest (dark share 0.032, rest
 * 0.038); sample5 dark (0.95 px) keeps its drawn edge too: its 5.35 was its synthesized teeth,
 * at luma 170 against skin at 48, not the edge (dimmed to the face's light in photoTeeth.ts: 2.6).
 */
const SOFT_LIPS = 1.15;

export interface PhotoAtlasBuild {
  atlas: AvatarAtlas;
  /** The neutral frame as RGB (the preview). */
  neutral: Uint8Array;
  /**
   * The widest-open frame (I420) with the dark of the mouth drawn grey at the same luma, on which
   * the dark's gain was aimed (the lips a viewer's detector finds there); undefined where the
   * build did not aim (no `findLandmarks`). What the mouth's figures are measured along: a warm
   * dark moves the detector's inner lip landmarks with its colour alone (a reference for
   * measuring, not for showing; test/support/mouthUpClose.ts).
   */
  aimFrame?: Uint8Array;
  timings: Record<'poses' | 'eyes' | 'mouths' | 'aim', number>;
}

/**
 * Builds the atlas from the framed canvas (CANVAS_SIZE square RGB, the frame at CANVAS_MARGIN)
 * and the 68 landmarks in frame coordinates; `photoScale` is how many frame pixels a pixel of
 * the picture became (a small photo's are large: what is drawn into it is as soft). A second or
 * two of CPU, and with `findLandmarks` one face detection more: callers run it off the event loop
 * (the photo worker).
 */
export async function buildPhotoAtlas(
  canvasRgb: Uint8Array,
  landmarks: readonly Point[],
  atlasId: string,
  photoScale = 1,
  {
    findLandmarks,
  }: {
    /**
     * A face detector's 68 landmarks on a 512 x 512 RGB frame (undefined where it finds no face):
     * the dark's gain is aimed where it puts the lips on the widest-open frame (aimDarkGain).
     */
    findLandmarks?: (
      rgb: Uint8Array,
      width: number,
      height: number,
    ) => Promise<Point[] | undefined>;
  } = {},
): Promise<PhotoAtlasBuild> {
  const started = performance.now();
  const canvas = floatPicture(CANVAS_SIZE, CANVAS_SIZE, canvasRgb);
  const face = photoFace(landmarks);
  const colours = measureFaceColours(canvas, CANVAS_MARGIN, face);
  const teeth = measurePhotoTeeth(canvas, CANVAS_MARGIN, face.mouth, colours);
  const eyeRect = eyeSpriteRect(face, SPRITE_MARGIN);
  // The sprite reaches below the chin as far as the widest jaw drops it.
  const room = jawRoom(face, SPRITE_MARGIN);
  const jawDrop = Math.max(...VISEMES.map((v) => mouthPose(face.mouth, teeth, v, 1, room).jawDrop));
  let mouthRect = mouthSpriteRect(face, jawDrop, SPRITE_MARGIN);
  mouthRect = belowRect(mouthRect, eyeRect);

  const weights = motionWeights(face, [eyeRect, mouthRect], SPRITE_MARGIN);
  const poses: Uint8Array[] = [];
  let neutral: Uint8Array = new Uint8Array(0);
  for (let b = 0; b < BREATH_LEVELS; b++) {
    for (const sway of SWAY_OFFSETS) {
      const rgb = renderPose(canvas, CANVAS_MARGIN, weights, sway, b);
      if (b === 0 && sway === 0) neutral = toBytes(rgb);
      poses.push(rgbToI420(rgb, FRAME_WIDTH, FRAME_HEIGHT));
    }
  }
  const blends: PoseBlend[] = [];
  for (let i = 0; i + SWAY_OFFSETS.length < poses.length; i++) {
    blends.push(
      poseBlend(poses[i] as Uint8Array, poses[i + SWAY_OFFSETS.length] as Uint8Array, PHOTO_BLEND),
    );
  }
  const posesDone = performance.now();

  const eyes: Uint8Array[] = [];
  for (const gaze of GAZES) {
    for (const lid of LID_LEVELS) {
      const rgb = renderEyeSprite(canvas, CANVAS_MARGIN, face, eyeRect, {
        lid,
        gazeX: gaze.x,
        gazeY: gaze.y,
        browDrop: gaze.browDrop,
      });
      eyes.push(rgbToI420(rgb, eyeRect.width, eyeRect.height));
    }
  }
  const eyesDone = performance.now();

  // The inside's edges as soft as the lips' own outer edges (less the drawn edge's own 1 px
  // ramp, a sigma of about 0.3 px) in a photo scaled up, and as soft as its pixels at least; its
  // grain the skin's. A photo at or above the frame's resolution keeps the drawn edge unless its
  // lips are soft (SOFT_LIPS): blurred as its lips (0.65 px on face-api sample6), a smile's thin
  // opening no longer read as open (the dark share of its mouth region at AA 0.6 went from 0.057
  // to 0.024).
  const surface = measureMouthSurface(canvas, CANVAS_MARGIN, face);
  const lipSoftness = Math.sqrt(Math.max(0, (INNER_EDGE * surface.lipEdge) ** 2 - 0.09));
  const closedSoftness = Math.max(interiorSoftness(photoScale), photoScale > 1 ? lipSoftness : 0);
  // Soft lips at or above the frame's resolution soften only an open mouth's inside: the closed
  // shapes (rest, m, b, p; the seam's shade) stay as they were, and so does their identity.
  const openSoftness =
    surface.lipEdge >= SOFT_LIPS ? Math.max(closedSoftness, lipSoftness) : closedSoftness;
  const mouthRgb = (
    viseme: (typeof VISEMES)[number],
    amount: number,
    darkGain: number,
    grey = false,
  ) => {
    const pose = mouthPose(face.mouth, teeth, viseme, amount, room);
    return renderMouthSprite(canvas, CANVAS_MARGIN, face, mouthRect, pose, colours, teeth, {
      softness: viseme === 'rest' || pose.seam ? closedSoftness : openSoftness,
      grain: surface.grain,
      greyDark: grey,
      darkGain,
    });
  };
  // How warm the dark is drawn: one gain for every sprite of this portrait,
  // aimed on the widest-open frame where a face detector puts the lips, when there is one: the
  // lips a viewer sees round an open mouth are stretched and cut otherwise than the photo's at
  // rest (Walter White's 1.16 times colder), and the dark within them is not the model's (about
  // half a second a build, most of it the detection; docs/photo-avatars.md).
  let darkGain = portraitDarkGain(colours, teeth);
  let aimMs = 0;
  let aimFrame: Uint8Array | undefined;
  if (findLandmarks) {
    const aimStarted = performance.now();
    const still = (rgb: Float32Array): Uint8Array => {
      const sprite = rgbToI420(rgb, mouthRect.width, mouthRect.height);
      return renderStill(
        {
          avatarId: atlasId,
          poses,
          blends,
          eyes: spriteSet(eyeRect, eyes),
          // The sprite and its every byte changed: a sprite set pastes what varies, here all.
          mouths: spriteSet(mouthRect, [sprite, sprite.map((b) => b ^ 1)]),
          mouthRegion: mouthMeasureRegion(face, mouthRect),
          buildMs: 0,
          bytes: 0,
        },
        // The first sprite of that set (the widest-open one, here).
        { mouth: { viseme: VISEMES[0], openness: 0 } },
      );
    };
    darkGain = await aimDarkGain(
      darkGain,
      // The lips where the detector finds them on the frame with the dark grey at the same luma
      // (as the figures are measured: a warm dark moves the detector's inner lip contour).
      () => {
        aimFrame = still(mouthRgb('AA', 1, 1, true));
        const rgb = i420ToRgb({ width: FRAME_WIDTH, height: FRAME_HEIGHT, data: aimFrame });
        return findLandmarks(rgb, FRAME_WIDTH, FRAME_HEIGHT);
      },
      // The dark's warmth on the sprite alone, as pasted into the frame (its planes copied as
      // they are at even offsets: the same pixels as the frame's there, without the frame).
      (gain, lips) => {
        const sprite = rgbToI420(mouthRgb('AA', 1, gain), mouthRect.width, mouthRect.height);
        const rgb = i420ToRgb({ width: mouthRect.width, height: mouthRect.height, data: sprite });
        return openMouthWarmth(rgb, mouthRect.width, mouthRect.height, lips, mouthRect);
      },
      (gain, seen) => reaimedDarkGain(colours, teeth, gain, seen),
    );
    aimMs = performance.now() - aimStarted;
  }
  const mouthSprite = (viseme: (typeof VISEMES)[number], amount: number) =>
    rgbToI420(mouthRgb(viseme, amount, darkGain), mouthRect.width, mouthRect.height);
  const mouths: Uint8Array[] = [mouthSprite('rest', 0)];
  for (let v = 1; v < VISEMES.length; v++) {
    for (let level = 1; level < MOUTH_LEVELS; level++) {
      mouths.push(mouthSprite(VISEMES[v] ?? 'rest', level / (MOUTH_LEVELS - 1)));
    }
  }
  const mouthsDone = performance.now();

  const bytes =
    [...poses, ...eyes, ...mouths].reduce((n, a) => n + a.byteLength, 0) +
    blends.reduce((n, b) => n + b.spans.byteLength + b.delta.byteLength, 0);
  const atlas: AvatarAtlas = {
    avatarId: atlasId,
    poses,
    blends,
    eyes: spriteSet(eyeRect, eyes),
    mouths: spriteSet(mouthRect, mouths),
    mouthRegion: mouthMeasureRegion(face, mouthRect),
    buildMs: performance.now() - started,
    bytes,
  };
  return {
    atlas,
    neutral,
    aimFrame,
    timings: {
      poses: posesDone - started,
      eyes: eyesDone - posesDone,
      mouths: mouthsDone - eyesDone - aimMs,
      aim: aimMs,
    },
  };
}

/**
 * The dark's gain aimed where a viewer's face detector puts the lips (issue 43): its landmarks
 * found once (`landmarks`), the widest-open mouth drawn at `gain` and its dark's warmth over
 * those lips measured (`warmth`, openMouthWarmth), then the gain re-aimed (`reaim`); twice, the
 * second from the first's drawing. `gain` as it was where no face or no dark is found.
 */
async function aimDarkGain(
  gain: number,
  landmarks: () => Promise<Point[] | undefined>,
  warmth: (gain: number, lips: readonly Point[]) => number,
  reaim: (gain: number, seen: number) => number,
): Promise<number> {
  const found = await landmarks();
  if (!found) return gain;
  let aimed = gain;
  for (let n = 0; n < AIM_STEPS; n++) {
    const seen = warmth(aimed, found);
    if (!Number.isFinite(seen)) break;
    aimed = reaim(aimed, seen);
  }
  return aimed;
}

/** How many times the gain is measured on the frame and re-aimed. */
const AIM_STEPS = 2;

/** The mouth sprite must not reach up into the eye sprite (they are pasted one after the other). */
function belowRect(mouth: Rect, eyes: Rect): Rect {
  const top = Math.max(mouth.y, eyes.y + eyes.height);
  return { ...mouth, y: top, height: mouth.y + mouth.height - top };
}

/**
 * Where the mouth's opening is measured: around the lips and as far down as the lower lip
 * travels, not the chin or the neck (their shadows would count as an open mouth).
 */
function mouthMeasureRegion(face: ReturnType<typeof photoFace>, sprite: Rect): Rect {
  const { mouth } = face;
  const hw = mouth.halfWidth;
  const corners = [
    mouth.frame.toImage(-hw * 1.1, mouth.upperOuter.at(0) - 0.2 * hw),
    mouth.frame.toImage(hw * 1.1, mouth.upperOuter.at(0) - 0.2 * hw),
    mouth.frame.toImage(-hw * 1.1, mouth.lowerOuter.at(0) + 0.6 * hw),
    mouth.frame.toImage(hw * 1.1, mouth.lowerOuter.at(0) + 0.6 * hw),
  ];
  const x0 = Math.max(sprite.x, Math.floor(Math.min(...corners.map((c) => c.x))));
  const y0 = Math.max(sprite.y, Math.floor(Math.min(...corners.map((c) => c.y))));
  const x1 = Math.min(sprite.x + sprite.width, Math.ceil(Math.max(...corners.map((c) => c.x))));
  const y1 = Math.min(sprite.y + sprite.height, Math.ceil(Math.max(...corners.map((c) => c.y))));
  return { x: x0, y: y0, width: x1 - x0, height: y1 - y0 };
}

function toBytes(rgb: Float32Array): Uint8Array {
  const out = new Uint8Array(rgb.length);
  for (let i = 0; i < rgb.length; i++) out[i] = Math.round(rgb[i] as number);
  return out;
}

export type { FloatPicture };
