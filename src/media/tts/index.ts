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
export {
  splitSentences,
  type SentenceChunk,
  type SplitSentencesOptions,
} from './splitSentences.js';
export { synthesizeSentences, type SentenceSynthesis } from './synthesizeSentences.js';
export type {
  PhonemeTiming,
  SynthesisOptions,
  SynthesisResult,
  TtsEngine,
  TtsEngineCapabilities,
  WordTiming,
} from './ttsEngine.js';
export {
  createTtsEngine,
  DEFAULT_TTS_ENGINE,
  registerTtsEngine,
  registeredTtsEngines,
  TtsEngineUnavailableError,
  UnknownTtsEngineError,
  type TtsEngineFactory,
} from './ttsEngineRegistry.js';
