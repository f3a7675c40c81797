// SPDX-License-Identifier: GPL-3.0-or-later
// Lips that close (issue 43, part 1): while a photo avatar says a sentence full of p, b and m,
// the share of its speaking frames in which a face detector finds the lips closed. Shared by
// test/media/photo/lipClosure.slow.test.ts and `npm run bench -- photo`.
import { createHash } from 'node:crypto';
import { AudioMouthTracker } from '../../../src/media/lipsync/audioMouthTracker.js';
import { speechMouth } from '../../../src/media/lipsync/speechMouth.js';
import { visemeIndex, type MouthPose } from '../../../src/media/lipsync/viseme.js';
import { mouthPoseAt, visemeTimeline } from '../../../src/media/lipsync/visemeTimeline.js';
import {
  MOUTH_LEVELS,
  mouthSpriteIndex,
  i420ToRgb,
  renderStill,
  type AvatarAtlas,
} from '../../../src/media/render/index.js';
import { synthesizeWithEspeak } from '../../../src/media/tts/espeakEngine.js';
import { espeakRuntime } from '../../../src/media/tts/espeakRuntime.js';
import { stockVoiceProfile } from '../../../src/media/tts/espeakStockVoices.js';
import { faceMesh, meshLipGap } from '../../support/faceMesh.js';
import { faceLandmarks, innerLipGap } from '../../support/faceQuality.js';
import { lipPixelOpening } from '../../support/lipPixels.js';

/** What the man photographed mid-word was made to say (issue 43). */
export const BILABIAL_SENTENCE =
  'Maybe my mother bought a big blue map, but please pay me back by Monday.';
/** Lips count as closed where their inner gap is at most this share of the nose-to-chin height. */
export const CLOSED_SHARE = 0.02;
/**
 * Lips count as closed by their pixels (test/support/lipPixels.ts) where the run of teeth or dark
 * across the inner-lip line is at most this share of the mouth's width: on the real photographs
 * no open mouth reads under 4.3 %, and 16 of the 21 closed ones read under 2 %
 * (lipMeasure.slow.test.ts).
 */
export const PIXEL_CLOSED_SHARE = 0.02;
/** The goal: at least this share of the speaking frames shows closed lips, on every portrait. */
export const CLOSED_FRAMES_GOAL = 0.05;
/** Frames are sampled at 25 fps, as a session sends them. */
const FRAME_MS = 40;

export interface SpokenMouth {
  /** The mouth per speaking frame (first phoneme to last), as a session drives it in text mode. */
  poses: MouthPose[];
}

let spoken: Promise<SpokenMouth> | undefined;

/** The sentence in Milo's voice (a man's), its mouth per frame from the sound and the phonemes. */
export function spokenBilabials(): Promise<SpokenMouth> {
  spoken ??= (async () => {
    const runtime = await espeakRuntime();
    const profile = stockVoiceProfile('voice_Milo00000000000000000001')!;
    const speech = synthesizeWithEspeak(runtime, BILABIAL_SENTENCE, profile.espeak);
    // As speechPlayer drives it: the sound's tracker fed in 100 ms chunks, and the phonemes'
    // timeline for the closures.
    const tracker = new AudioMouthTracker();
    const chunk = Math.round(speech.sampleRate / 10);
    for (let i = 0; i < speech.pcm.length; i += chunk) {
      tracker.push(speech.pcm.subarray(i, i + chunk), speech.sampleRate);
    }
    const timeline = visemeTimeline(speech.phonemes);
    const from = Math.min(...speech.phonemes.map((p) => p.startMs));
    const to = Math.max(...speech.phonemes.map((p) => p.endMs));
    const poses: MouthPose[] = [];
    for (let t = from; t < to; t += FRAME_MS) {
      poses.push(speechMouth(tracker.poseAt(t), mouthPoseAt(timeline, t)));
    }
    return { poses };
  })();
  return spoken;
}

/** One detector's reading of the speaking frames. */
export interface ClosureReading {
  /** Share of the speaking frames with closed lips. */
  closedShare: number;
  /** Frames in which the detector found no face (counted as not closed). */
  unseen: number;
  /**
   * The inner-lip gap, share of nose-to-chin (the pixels' opening: share of the mouth's width),
   * in the rest frame (the photo's mouth at rest).
   */
  restGap: number;
  /** The smallest inner-lip gap (or opening) of any speaking frame, as `restGap`. */
  minGap: number;
  /** The largest, as `restGap`: a measure that reads every frame closed would count nothing. */
  maxGap: number;
}

export interface LipClosure {
  frames: number;
  /**
   * Human's 468-point face mesh (test/support/faceMesh.ts): the measure the goal is held to.
   * On the real photographs it reads no open mouth closed (docs/photo-avatars.md).
   */
  mesh: ClosureReading;
  /** face-api's 68 landmarks: printed beside it (they misread closed smiles as open). */
  faceApi: ClosureReading;
  /**
   * The pixels between the lips, located by face-api's landmarks (closed at PIXEL_CLOSED_SHARE):
   * on the real photographs they read more closed mouths closed than either landmark gap, but a
   * made open mouth under dark lips reads closed (docs/photo-avatars.md).
   */
  pixels: ClosureReading;
}

/** One distinct picture among the frames, as RGB, and a measure of it. */
type GapOf = (rgb: Uint8Array) => Promise<number | undefined>;

const SIDE = 512;

/**
 * Renders every speaking frame's mouth on the atlas and measures its inner-lip gap with the face
 * mesh and with face-api's landmarks, and the pixels between its lips. The frames differ only in
 * their mouth sprite, and the same pixels give the same readings, so each distinct picture (keyed
 * by a hash of its pixels: the rest frame is one of the sprites' pictures) is converted to RGB and
 * measured once, and counted as often as it is shown. face-api's landmarks (its SSD detector,
 * then the 68 points: most of the measure's time, about 0.6 s a picture against the mesh's 0.1)
 * are found once a picture for both the pixels and face-api's gap.
 */
export async function measureLipClosure(atlas: AvatarAtlas): Promise<LipClosure> {
  const { poses } = await spokenBilabials();
  const count = new Map<number, { pose: MouthPose; n: number }>();
  for (const pose of poses) {
    const level = Math.round(Math.min(1, Math.max(0, pose.openness)) * (MOUTH_LEVELS - 1));
    const sprite = mouthSpriteIndex(visemeIndex(pose.viseme), level);
    const seen = count.get(sprite);
    if (seen) seen.n++;
    else count.set(sprite, { pose, n: 1 });
  }
  // One RGB picture per distinct frame, whatever pose drew it.
  const pictures = new Map<string, Uint8Array>();
  const pictureOf = (i420: Uint8Array): Uint8Array => {
    const key = createHash('sha256').update(i420).digest('hex');
    let rgb = pictures.get(key);
    if (!rgb) {
      rgb = i420ToRgb({ width: SIDE, height: SIDE, data: i420 });
      pictures.set(key, rgb);
    }
    return rgb;
  };
  const frames = [...count.values()].map(({ pose, n }) => ({
    rgb: pictureOf(renderStill(atlas, { mouth: pose })),
    n,
  }));
  const rest = pictureOf(renderStill(atlas, {}));

  const landmarksOf = once((rgb) => faceLandmarks(rgb, SIDE, SIDE));
  const meshGap: GapOf = async (rgb) => {
    const mesh = await faceMesh(rgb, SIDE, SIDE);
    if (!mesh) return undefined;
    const { gap, noseToChin } = meshLipGap(mesh);
    return gap / noseToChin;
  };
  const faceApiGap: GapOf = async (rgb) => {
    const landmarks = await landmarksOf(rgb);
    if (!landmarks) return undefined;
    const { gap, noseToChin } = innerLipGap(landmarks);
    return gap / noseToChin;
  };
  const pixelOpening: GapOf = async (rgb) => {
    const landmarks = await landmarksOf(rgb);
    if (!landmarks) return undefined;
    return lipPixelOpening(rgb, SIDE, SIDE, landmarks).opening;
  };

  const read = async (gapOf: GapOf, bound = CLOSED_SHARE): Promise<ClosureReading> => {
    const gapAt = once(gapOf);
    let closed = 0;
    let unseen = 0;
    let minGap = Infinity;
    let maxGap = -Infinity;
    for (const { rgb, n } of frames) {
      const share = await gapAt(rgb);
      if (share === undefined) unseen += n;
      else {
        minGap = Math.min(minGap, share);
        maxGap = Math.max(maxGap, share);
        if (share <= bound) closed += n;
      }
    }
    return {
      closedShare: closed / poses.length,
      unseen,
      restGap: (await gapAt(rest)) ?? NaN,
      minGap,
      maxGap,
    };
  };
  return {
    frames: poses.length,
    mesh: await read(meshGap),
    faceApi: await read(faceApiGap),
    pixels: await read(pixelOpening, PIXEL_CLOSED_SHARE),
  };
}

/**
 * `measure` of each picture made once: a distinct picture is one array (measureLipClosure's
 * `pictureOf`), so its array is its key.
 */
function once<T>(measure: (rgb: Uint8Array) => Promise<T>): (rgb: Uint8Array) => Promise<T> {
  const found = new WeakMap<Uint8Array, Promise<T>>();
  return (rgb) => {
    let result = found.get(rgb);
    if (!result) {
      result = measure(rgb);
      found.set(rgb, result);
    }
    return result;
  };
}
