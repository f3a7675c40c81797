// SPDX-License-Identifier: GPL-3.0-or-later
import { faceApiWith, tfjs } from './faceModels.js';
import { estimateHeadPose, type HeadPose } from './headPose.js';
import { at, distance, JAW, mean, type Point } from './landmarks.js';
import { PhotoError } from './photoError.js';

/**
 * A face-like thing found in a picture: the SSD detector's box and score, the 68 landmarks, the
 * head pose fitted to them, and how sure a second detector (the tiny face detector, another
 * network trained on other data) is that the same box holds a face.
 */
export interface FoundFace {
  box: { x: number; y: number; width: number; height: number };
  score: number;
  landmarks: Point[];
  /** The tiny detector's score for a box over the same face; 0 where it saw none. */
  confirmation: number;
  pose: HeadPose;
  /**
   * The age and gender net's probability that the face is a man's (0..1), from the aligned face:
   * what the photo avatar's default voice is chosen by (photoVoice.ts).
   */
  maleProbability: number;
}

/** Which faces can be animated (see chooseFace and docs/photo-portraits.md). */
export interface FaceLimits {
  /** The face box's longer side in the original picture, px (default 96): the build's least. */
  minFacePx: number;
  /** Head turned to the side, degrees (default 30). */
  maxYawDeg: number;
  /** Head tipped down or back, degrees (default 20). */
  maxPitchDeg: number;
  /** Head tilted in the picture's plane, degrees; the crop turns it upright (default 60). */
  maxRollDeg: number;
  /** The second detector's score a face needs (default 0.2)... */
  minConfirmation: number;
  /**
   * ...and a face the first detector is unsure of (score under 0.5, as for a close-up with
   * glasses, and for a face on its side, whose landmarks are guesses) needs this (default 0.7).
   */
  minConfirmationOfWeak: number;
  /** How far the landmarks may be from a human face's shape (HeadPose.misfit, default 0.09). */
  maxMisfit: number;
}

export const DEFAULT_FACE_LIMITS: FaceLimits = {
  minFacePx: 96,
  maxYawDeg: 30,
  maxPitchDeg: 20,
  maxRollDeg: 60,
  minConfirmation: 0.2,
  minConfirmationOfWeak: 0.7,
  maxMisfit: 0.09,
};

/**
 * Another face at least this share of the largest one's size makes the picture ambiguous: which
 * person is meant (a group photo, two people side by side) is the caller's to say, by cropping.
 * A face smaller than this, far behind, is left out (a passer-by in the background).
 */
export const SECOND_FACE_SHARE = 0.5;
/** SSD score a box needs to be looked at (the second detector and the fit decide). */
const MIN_SCORE = 0.2;
/** The SSD score above which the first detector is taken to be sure. */
const SURE_SCORE = 0.5;
/** An unconfirmed box this sure, turned beyond the limit, is taken for a profile. */
const PROFILE_SCORE = 0.3;
/** The tiny detector looks at a square this many times the box's side around it... */
const CONFIRM_AREA = 2;
/** ...scaled to this input side, px (the face then fills about half of it). */
const TINY_INPUT = 320;
/** Boxes of the two detectors overlap this much (intersection over union) on one face. */
const SAME_FACE_IOU = 0.3;

/**
 * Every face-like box in an RGB picture (SSD MobileNet V1, then the 68-point landmark net and
 * the age and gender net on each, then the tiny face detector around each), largest first. Runs the networks
 * on the calling thread: about a second for a 2000 px photo here, so callers keep it off the
 * event loop (the photo worker).
 */
export async function detectFaces(
  rgb: Uint8Array,
  width: number,
  height: number,
): Promise<FoundFace[]> {
  const faceapi = await faceApiWith('detector', 'tinyDetector', 'landmarks', 'ageGender');
  const tensor = tfjs().tensor3d(rgb, [height, width, 3], 'int32');
  try {
    const found = await faceapi
      .detectAllFaces(
        tensor as never,
        new faceapi.SsdMobilenetv1Options({ minConfidence: MIN_SCORE, maxResults: 20 }),
      )
      .withFaceLandmarks()
      .withAgeAndGender();
    const faces: FoundFace[] = [];
    for (const f of found) {
      const box = {
        x: f.detection.box.x,
        y: f.detection.box.y,
        width: f.detection.box.width,
        height: f.detection.box.height,
      };
      const landmarks = f.landmarks.positions.map((p) => ({ x: p.x, y: p.y }));
      faces.push({
        box,
        score: f.detection.score,
        landmarks,
        confirmation: await confirm(faceapi, tensor, box, width, height),
        pose: estimateHeadPose(landmarks),
        maleProbability: f.gender === 'male' ? f.genderProbability : 1 - f.genderProbability,
      });
    }
    return faces.sort((a, b) => b.box.width * b.box.height - a.box.width * a.box.height);
  } finally {
    tensor.dispose();
  }
}

/**
 * The 68 landmarks of the largest face the first detector finds (from MIN_SCORE) on an RGB
 * picture, without the second detector or the age and gender net; undefined where it finds none.
 * For a frame the build drew itself (buildPhotoAtlas: where a viewer's detector puts the lips of
 * its widest-open mouth), not to choose a face in a photo.
 */
export async function largestFaceLandmarks(
  rgb: Uint8Array,
  width: number,
  height: number,
): Promise<Point[] | undefined> {
  const faceapi = await faceApiWith('detector', 'landmarks');
  const tensor = tfjs().tensor3d(rgb, [height, width, 3], 'int32');
  try {
    const found = await faceapi
      .detectAllFaces(
        tensor as never,
        new faceapi.SsdMobilenetv1Options({ minConfidence: MIN_SCORE }),
      )
      .withFaceLandmarks();
    const area = (f: (typeof found)[number]) => f.detection.box.width * f.detection.box.height;
    const largest = [...found].sort((a, b) => area(b) - area(a))[0];
    return largest?.landmarks.positions.map((p) => ({ x: p.x, y: p.y }));
  } finally {
    tensor.dispose();
  }
}

/**
 * The face to animate: the largest one that both detectors see, checked against the limits.
 * `scale` converts the detection picture's pixels to the original's (it may have been decoded
 * smaller). The checks, in order: a human face at all (the second detector agrees; where
 * nothing face-like is as large as minFacePx, the face is said to be too small: a face that
 * small is not told from an animal or a drawing, and could not be animated either way), its
 * size, one face (another as large as SECOND_FACE_SHARE of it is refused: the caller is to crop
 * the picture to the face they mean; a face far behind is ignored), its pose (turned or tipped
 * too far is said as such; a tilt in the picture's plane is corrected by the crop up to
 * maxRollDeg), and last whether its landmarks fit a human face's shape (masks and statues that
 * fool both detectors).
 */
export function chooseFace(
  faces: readonly FoundFace[],
  scale: number,
  limits: FaceLimits = DEFAULT_FACE_LIMITS,
): FoundFace {
  const human = faces.filter((f) => isHumanFace(f, limits));
  const across = (f: FoundFace) => Math.max(f.box.width, f.box.height) * scale;
  const face = human[0];
  if (!face) {
    // Too small to tell: the second detector does not see small faces well (a 64 px portrait's
    // face, 28 px, got 0.16 from it), and no face that small can be animated anyway.
    const largest = Math.max(0, ...faces.map(across));
    if (faces.length && largest < limits.minFacePx) {
      throw new PhotoError(
        'face_too_small',
        `The only face-like thing found is ${Math.round(largest)} px across, too small to animate (or to tell whether it is a person's face); at least ${limits.minFacePx} px is needed (use a closer or larger photo).`,
      );
    }
    // A profile: the second detector (trained on frontal faces) does not see it, the fit does.
    const turned = faces.find((f) => f.score >= PROFILE_SCORE);
    if (turned && Math.abs(turned.pose.yawDeg) > limits.maxYawDeg) throw turnedAway(turned, limits);
    throw new PhotoError(
      'no_face_found',
      faces.length
        ? "No person's face was found in the image (something face-like, such as an animal, a drawing or a mask, is not animated; and a picture lying on its side must be turned upright first): use a photo of a person with one clearly visible face."
        : `No face was found in the image (a face too small or too blurred is not found either): use a photo with one clearly visible face, at least ${limits.minFacePx} px across.`,
    );
  }
  const size = across(face);
  if (size < limits.minFacePx) {
    throw new PhotoError(
      'face_too_small',
      `The face is ${Math.round(size)} px across; at least ${limits.minFacePx} px is needed (use a closer or larger photo).`,
    );
  }
  const others = human.slice(1).filter((f) => across(f) >= SECOND_FACE_SHARE * size);
  if (others.length) {
    const sizes = [face, ...others].map((f) => Math.round(across(f))).sort((a, b) => b - a);
    throw new PhotoError(
      'multiple_faces',
      `The image shows ${sizes.length} faces (${sizes.join(', ')} px across) and an avatar is made from one: crop the picture to the face to animate (a face under half the size of the largest is left out).`,
    );
  }
  const { yawDeg, pitchDeg, rollDeg, misfit } = face.pose;
  if (Math.abs(yawDeg) > limits.maxYawDeg) throw turnedAway(face, limits);
  if (Math.abs(pitchDeg) > limits.maxPitchDeg) {
    throw new PhotoError(
      'face_not_frontal',
      `The face is tipped ${pitchDeg > 0 ? 'down' : 'back'} by ${Math.abs(pitchDeg).toFixed(0)} degrees; at most ${limits.maxPitchDeg} can be animated: use a photo looking into the camera.`,
    );
  }
  if (Math.abs(rollDeg) > limits.maxRollDeg) {
    throw new PhotoError(
      'face_not_frontal',
      `The head is tilted by ${Math.abs(rollDeg).toFixed(0)} degrees; at most ${limits.maxRollDeg} can be turned upright: use a photo that is the right way up.`,
    );
  }
  if (misfit > limits.maxMisfit) {
    throw new PhotoError(
      'no_face_found',
      "The face found does not have a person's proportions (a mask, a statue or a drawing?): use a photo of a person with one clearly visible face.",
    );
  }
  return face;
}

/**
 * Refuses a picture too small to hold a face of minFacePx (its shorter side under it) before
 * any detection: whatever a detector made of it, no face in it can be animated.
 */
export function checkPictureSize(
  width: number,
  height: number,
  limits: FaceLimits = DEFAULT_FACE_LIMITS,
): void {
  if (Math.min(width, height) >= limits.minFacePx) return;
  throw new PhotoError(
    'face_too_small',
    `The picture is ${width} x ${height} px, too small to hold a face ${limits.minFacePx} px across, the least a photo avatar is made from: use a larger photo, the face at least ${limits.minFacePx} px across.`,
  );
}

/** Both detectors see a face there (a weak first detection needs a sure second one). */
export function isHumanFace(face: FoundFace, limits: FaceLimits = DEFAULT_FACE_LIMITS): boolean {
  const needs = face.score >= SURE_SCORE ? limits.minConfirmation : limits.minConfirmationOfWeak;
  return face.confirmation >= needs;
}

function turnedAway(face: FoundFace, limits: FaceLimits): PhotoError {
  return new PhotoError(
    'face_not_frontal',
    `The head is turned ${Math.abs(face.pose.yawDeg).toFixed(0)} degrees to the side (towards a profile); at most ${limits.maxYawDeg} can be animated: use a photo looking into the camera.`,
  );
}

/** The jaw's width (cheek to cheek at ear height), the face's scale for framing. */
export function jawWidth(landmarks: readonly Point[]): number {
  return distance(at(landmarks, JAW[0]!), at(landmarks, JAW[JAW.length - 1]!));
}

type Box = FoundFace['box'];
type Tensor3D = ReturnType<ReturnType<typeof tfjs>['tensor3d']>;

/**
 * The tiny detector's score for the face in `box`: it looks at a square around the box (so the
 * face has the same size in its input whatever the picture's size) and the best of its boxes
 * over the same face counts.
 */
async function confirm(
  faceapi: Awaited<ReturnType<typeof faceApiWith>>,
  picture: Tensor3D,
  box: Box,
  width: number,
  height: number,
): Promise<number> {
  const side = Math.round(Math.max(box.width, box.height) * CONFIRM_AREA);
  const cx = box.x + box.width / 2;
  const cy = box.y + box.height / 2;
  const x0 = Math.max(0, Math.round(cx - side / 2));
  const y0 = Math.max(0, Math.round(cy - side / 2));
  const w = Math.min(width, x0 + side) - x0;
  const h = Math.min(height, y0 + side) - y0;
  if (w < 8 || h < 8) return 0;
  const area = tfjs().slice(picture, [y0, x0, 0], [h, w, 3]) as Tensor3D;
  try {
    const seen = await faceapi.detectAllFaces(
      area as never,
      new faceapi.TinyFaceDetectorOptions({ inputSize: TINY_INPUT, scoreThreshold: 0.05 }),
    );
    const inArea = { x: box.x - x0, y: box.y - y0, width: box.width, height: box.height };
    return Math.max(
      0,
      ...seen.filter((t) => overlap(t.box, inArea) >= SAME_FACE_IOU).map((t) => t.score),
    );
  } finally {
    area.dispose();
  }
}

function overlap(a: Box, b: Box): number {
  const w = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
  const h = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
  if (w <= 0 || h <= 0) return 0;
  const inter = w * h;
  return inter / (a.width * a.height + b.width * b.height - inter);
}

export { mean };
