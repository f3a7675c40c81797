import { faceApiWith, tfjs } from './faceModels.js';
import { at, CHIN, distance, FaceFrame, JAW, mean, NOSE_TIP, type Point } from './landmarks.js';
import { PhotoError } from './photoError.js';

/** A face found in a picture: the detector's box and score, and the 68 landmarks. */
export interface FoundFace {
  box: { x: number; y: number; width: number; height: number };
  score: number;
  landmarks: Point[];
}

/** How far from frontal a face may be and still be animated (see `facePose`). */
export interface FaceLimits {
  /** The face box's longer side in the original picture, px (default 96). */
  minFacePx: number;
  /** Head tilt, degrees (default 20). */
  maxRollDeg: number;
  /** Nose tip off the middle of the face, as a share of the face's width (default 0.2, about 20 degrees). */
  maxYaw: number;
  /** Nose tip's height between the eyes and the chin (frontal about 0.45; default 0.3..0.62). */
  pitchRange: readonly [number, number];
}

export const DEFAULT_FACE_LIMITS: FaceLimits = {
  minFacePx: 96,
  maxRollDeg: 20,
  maxYaw: 0.2,
  pitchRange: [0.3, 0.62],
};

/** Detector confidence a face needs to count. */
const MIN_SCORE = 0.5;

/**
 * Every face in an RGB picture (SSD MobileNet V1, then the 68-point landmark net on each),
 * largest first. Runs the networks on the calling thread: about half a second for a 2000 px
 * photo here, so callers keep it off the event loop (the photo worker).
 */
export async function detectFaces(
  rgb: Uint8Array,
  width: number,
  height: number,
): Promise<FoundFace[]> {
  const faceapi = await faceApiWith('detector', 'landmarks');
  const tensor = tfjs().tensor3d(rgb, [height, width, 3], 'int32');
  try {
    const found = await faceapi
      .detectAllFaces(
        tensor as never,
        new faceapi.SsdMobilenetv1Options({ minConfidence: MIN_SCORE, maxResults: 20 }),
      )
      .withFaceLandmarks();
    return found
      .map((f) => ({
        box: {
          x: f.detection.box.x,
          y: f.detection.box.y,
          width: f.detection.box.width,
          height: f.detection.box.height,
        },
        score: f.detection.score,
        landmarks: f.landmarks.positions.map((p) => ({ x: p.x, y: p.y })),
      }))
      .sort((a, b) => b.box.width * b.box.height - a.box.width * a.box.height);
  } finally {
    tensor.dispose();
  }
}

/** How the head is turned, from the landmarks (see FaceLimits). */
export interface FacePose {
  rollDeg: number;
  /** -0.5..0.5: where the nose tip sits between the two sides of the jaw, 0 in the middle. */
  yaw: number;
  /** Where the nose tip sits between the eye line and the chin, 0..1. */
  pitch: number;
}

export function facePose(landmarks: readonly Point[]): FacePose {
  const frame = FaceFrame.of(landmarks);
  const left = frame.toFace(at(landmarks, JAW[0]!));
  const right = frame.toFace(at(landmarks, JAW[JAW.length - 1]!));
  const nose = frame.toFace(at(landmarks, NOSE_TIP));
  const chin = frame.toFace(at(landmarks, CHIN));
  return {
    rollDeg: (frame.roll * 180) / Math.PI,
    yaw: (nose.u - left.u) / Math.max(1e-6, right.u - left.u) - 0.5,
    pitch: nose.v / Math.max(1e-6, chin.v),
  };
}

/**
 * The face to animate: the largest one (a group photo gives its biggest face), checked against
 * the limits. `scale` converts the detection picture's pixels to the original's (it may have
 * been decoded smaller).
 */
export function chooseFace(
  faces: readonly FoundFace[],
  scale: number,
  limits: FaceLimits = DEFAULT_FACE_LIMITS,
): FoundFace {
  const face = faces[0];
  if (!face) {
    throw new PhotoError(
      'no_face_found',
      'No face was found in the image: use a photo with one clearly visible face.',
    );
  }
  const size = Math.max(face.box.width, face.box.height) * scale;
  if (size < limits.minFacePx) {
    throw new PhotoError(
      'face_too_small',
      `The face is ${Math.round(size)} px across; at least ${limits.minFacePx} px is needed (use a closer or larger photo).`,
    );
  }
  const pose = facePose(face.landmarks);
  const [pitchLow, pitchHigh] = limits.pitchRange;
  if (Math.abs(pose.rollDeg) > limits.maxRollDeg) {
    throw new PhotoError(
      'face_not_frontal',
      `The head is tilted by ${Math.abs(pose.rollDeg).toFixed(0)} degrees; at most ${limits.maxRollDeg} can be animated (use an upright photo).`,
    );
  }
  if (Math.abs(pose.yaw) > limits.maxYaw) {
    throw new PhotoError(
      'face_not_frontal',
      'The head is turned too far to the side to animate: use a photo looking into the camera.',
    );
  }
  if (pose.pitch < pitchLow || pose.pitch > pitchHigh) {
    throw new PhotoError(
      'face_not_frontal',
      `The head is tipped too far ${pose.pitch < pitchLow ? 'back' : 'down'} to animate: use a photo looking into the camera.`,
    );
  }
  return face;
}

/** The jaw's width (cheek to cheek at ear height), the face's scale for framing. */
export function jawWidth(landmarks: readonly Point[]): number {
  return distance(at(landmarks, JAW[0]!), at(landmarks, JAW[JAW.length - 1]!));
}

export { mean };
