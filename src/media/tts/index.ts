// SPDX-License-Identifier: GPL-3.0-or-later
export {
  DEFAULT_ESPEAK_VOICE,
  ESPEAK_LIMITS,
  espeakVariantFile,
  espeakVariantName,
  normalizeEspeakVoice,
  type EspeakVoiceSettings,
} from './espeakVoiceSettings.js';
export { EspeakEngine, synthesizeWithEspeak, type EspeakEngineOptions } from './espeakEngine.js';
export { stopEspeakThread } from './espeakThread.js';
export { espeakRuntime, type EspeakRuntime } from './espeakRuntime.js';
export { calibrateEspeakVoice } from './calibrateEspeakVoice.js';
export {
  espeakPitchFor,
  medianGain,
  rangeForSpread,
  spreadForRange,
  TOP_OVER_BASE,
} from './espeakPitchModel.js';
export { defaultVoiceProfile, stockVoiceProfile } from './espeakStockVoices.js';
export type { EspeakVoiceProfile } from './espeakVoiceProfile.js';
export {
  parseVoiceProfile,
  voiceProfileFor,
  voiceProfileSchema,
  VoiceProfileUnavailableError,
} from './espeakVoiceProfileSchema.js';
export {
  splitClauses,
  splitSentences,
  type SentenceChunk,
  type SplitSentencesOptions,
} from './splitSentences.js';
export { synthesizeSentences, type SentenceSynthesis } from './synthesizeSentences.js';
export {
  isTtsEngineId,
  TTS_ENGINE_IDS,
  VoiceUnavailableError,
  type EngineVoiceRef,
  type PhonemeTiming,
  type ReferenceClip,
  type SpeechChannel,
  type SpeechChunk,
  type SynthesisOptions,
  type SynthesisResult,
  type TtsEngine,
  type TtsEngineId,
  type VoiceSource,
  type WordTiming,
} from './ttsEngine.js';
export {
  checkTtsOptions,
  createTtsEngine,
  DEFAULT_TTS_ENGINE,
  TtsEngineUnavailableError,
  type TtsOptions,
  type TtsProviderOptions,
} from './ttsEngineRegistry.js';
export { TtsEngines } from './ttsEngines.js';
export { TtsProviderError, TtsProviderUnavailableError } from './ttsProviderError.js';
export { CartesiaEngine, type CartesiaEngineOptions } from './cartesia/cartesiaEngine.js';
export { ElevenLabsEngine, type ElevenLabsEngineOptions } from './elevenlabs/elevenLabsEngine.js';
