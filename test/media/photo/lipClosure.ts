// SPDX-License-Identifier: GPL-3.0-or-later
// Lips that close (issue 43, part 1): while a photo avatar says a sentence full of p, b and m,
// the share of its speaking frames in which a face detector finds the lips closed. Shared by
// test/media/photo/lipClosure.slow.test.ts and `npm run bench -- photo`.
import { AudioMouthTracker } from '../../../src/media/lipsync/audioMouthTracker.js';
import { speechMouth } from '../../../src/media/lipsync/speechMouth.js';
import { visemeIndex, type MouthPose } from '../../../src/media/lipsync/viseme.js';
import { mouthPoseAt, visemeTimeline } from '../../../src/media/lipsync/visemeTimeline.js';
import {
  MOUTH_LEVELS,
  mouthSpriteIndex,
  renderStill,
  type AvatarAtlas,
} from '../../../src/media/render/index.js';
import { synthesizeWithEspeak } from '../../../src/media/tts/espeakEngine.js';
import { espeakRuntime } from '../../../src/media/tts/espeakRuntime.js';
import { stockVoiceProfile } from '../../../src/media/tts/espeakStockVoices.js';
import { frameLandmarks, innerLipGap } from '../../support/faceQuality.js';

/** What the man photographed mid-word was made to say (issue 43). */
export const BILABIAL_SENTENCE =
  'Maybe my mother bought a big blue map, but please pay me back by Monday.';
/** Lips count as closed where their inner gap is at most this share of the nose-to-chin height. */
export const CLOSED_SHARE = 0.02;
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

export interface LipClosure {
  /** Share of the speaking frames with closed lips. */
  closedShare: number;
  frames: number;
  /** Frames in which the detector found no face (counted as not closed). */
  unseen: number;
  /** The inner-lip gap, share of nose-to-chin, in the rest frame (the photo's mouth at rest). */
  restGap: number;
}

/**
 * Renders every speaking frame's mouth on the atlas (the frames differ only in their mouth
 * sprite, so each sprite is rendered and measured once, and counted as often as it is shown)
 * and measures its inner-lip gap with face-api's landmarks.
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
  const gapShare = async (pose: MouthPose | undefined) => {
    const landmarks = await frameLandmarks(renderStill(atlas, pose ? { mouth: pose } : {}));
    if (!landmarks) return undefined;
    const { gap, noseToChin } = innerLipGap(landmarks);
    return gap / noseToChin;
  };
  let closed = 0;
  let unseen = 0;
  for (const { pose, n } of count.values()) {
    const share = await gapShare(pose);
    if (share === undefined) unseen += n;
    else if (share <= CLOSED_SHARE) closed += n;
  }
  return {
    closedShare: closed / poses.length,
    frames: poses.length,
    unseen,
    restGap: (await gapShare(undefined)) ?? NaN,
  };
}
