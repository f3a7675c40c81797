// SPDX-License-Identifier: GPL-3.0-or-later
export {
  alignPhonemes,
  MAX_MISMATCH,
  type PhonemeAlignment,
  type PhonemeAlignmentInput,
} from './alignPhonemes.js';
export { AudioMouthTracker, type AudioMouthTrackerOptions } from './audioMouthTracker.js';
export { ipaToVisemeUnits, type VisemeUnit } from './ipaVisemes.js';
export { MouthSchedule } from './mouthSchedule.js';
export { FEATURE_DIMS, FEATURE_HOP_MS, SpeechFeatures } from './speechFeatures.js';
export { speechMouth, wordsMouth } from './speechMouth.js';
export { TailAlignment, type TailAlignmentResult } from './tailAlignment.js';
export {
  LIP_CLOSURES,
  REST_POSE,
  VISEMES,
  isViseme,
  type MouthPose,
  type Viseme,
} from './viseme.js';
export {
  mouthPoseAt,
  visemeTimeline,
  type PhonemeTiming,
  type VisemeTimeline,
  type VisemeTimelineOptions,
} from './visemeTimeline.js';
