import type { VoiceProfile } from '../voice/voiceProfile.js';

/** A word as heard in the synthesized audio, with its span in the synthesized text. */
export interface WordTiming {
  text: string;
  startMs: number;
  endMs: number;
  /** UTF-16 offsets into the text given to `synthesize` (`text.slice(charStart, charEnd)`). */
  charStart: number;
  charEnd: number;
}

/** One phoneme, IPA without stress marks (length marks kept), for viseme timelines. */
export interface PhonemeTiming {
  ipa: string;
  startMs: number;
  endMs: number;
  /** Carried a primary or secondary stress mark in the engine's output. */
  stressed: boolean;
}

export interface SynthesisResult {
  sampleRate: number;
  /** Mono float PCM in [-1, 1]. */
  pcm: Float32Array;
  /** Words in order; empty when the engine gives no timings. */
  words: WordTiming[];
  /** Phonemes in order; empty when the engine gives no timings (drive the mouth from audio). */
  phonemes: PhonemeTiming[];
}

export interface SynthesisOptions {
  /** Aborting rejects with the signal's reason (an AbortError by default). */
  signal?: AbortSignal;
}

export interface TtsEngineCapabilities {
  wordTimings: boolean;
  phonemeTimings: boolean;
  /** True when the engine reproduces a speaker's identity from a clip (neural/hosted cloning). */
  cloning: boolean;
}

/**
 * A text-to-speech engine. Implementations: `EspeakEngine` (offline default). Hosted engines with
 * real cloning (ElevenLabs, Cartesia) and local neural engines (sherpa-onnx with operator-supplied
 * models) plug in through the registry in `ttsEngineRegistry.ts`.
 *
 * `synthesize` takes one chunk of text (use `splitSentences` and `synthesizeSentences` for long
 * text, so the first sentence plays while the next is synthesized).
 */
export interface TtsEngine {
  readonly id: string;
  readonly capabilities: TtsEngineCapabilities;
  synthesize(text: string, voice: VoiceProfile, opts?: SynthesisOptions): Promise<SynthesisResult>;
  /** Release engine resources (connections, workers). Optional for in-process engines. */
  close?(): Promise<void>;
}
