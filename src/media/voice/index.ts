export { analyzeVoiceClip, type AnalyzeVoiceClipOptions } from './analyzeVoiceClip.js';
export {
  espeakPitchFor,
  medianGain,
  rangeForSpread,
  spreadForRange,
  TOP_OVER_BASE,
} from './espeakPitchModel.js';
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
export { defaultVoiceProfile, stockVoiceProfile } from './stockVoices.js';
export type { VoiceProfile } from './voiceProfile.js';
export {
  parseVoiceProfile,
  voiceProfileFor,
  voiceProfileSchema,
  VoiceProfileUnavailableError,
} from './voiceProfileSchema.js';
