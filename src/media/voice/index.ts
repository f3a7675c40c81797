// SPDX-License-Identifier: GPL-3.0-or-later
export { analyzeVoiceClip, type VoiceAnalysis } from './analyzeVoiceClip.js';
export { estimateFormants, type FormantEstimate } from './lpcFormants.js';
export {
  measureVoice,
  measureVoiceAsync,
  measureVoiceSteps,
  type VoiceMeasurement,
} from './measureVoice.js';
export {
  pitchStatistics,
  trackPitch,
  type PitchStatistics,
  type PitchTrack,
  type PitchTrackerOptions,
} from './pitchTracker.js';
export { measureSpeakingRate, type SpeakingRate } from './speakingRate.js';
export { spectralTiltDbPerOctave } from './spectralTilt.js';
