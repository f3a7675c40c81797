// SPDX-License-Identifier: GPL-3.0-or-later
import type { Logger } from 'pino';
import type { VoiceAnalysis } from '../voice/analyzeVoiceClip.js';

/** The engines a voice can belong to (the voice resource's `engine`). */
export const TTS_ENGINE_IDS = ['espeak', 'elevenlabs', 'cartesia'] as const;
export type TtsEngineId = (typeof TTS_ENGINE_IDS)[number];

export function isTtsEngineId(value: string): value is TtsEngineId {
  return (TTS_ENGINE_IDS as readonly string[]).includes(value);
}

/** A word as heard in the synthesized audio, with its span in the synthesized text. */
export interface WordTiming {
  text: string;
  startMs: number;
  endMs: number;
  /** UTF-16 offsets into the text given to the engine (`text.slice(charStart, charEnd)`). */
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

/**
 * A piece of an utterance's audio as the engine produced it. Timings are relative to the first
 * sample of this chunk (they may start before it, or reach past its end, when a provider sends
 * timings separately from audio); word offsets index the whole utterance's text.
 */
export type SpeechChunk = SynthesisResult;

export interface SynthesisOptions {
  /** Aborting rejects with the signal's reason (an AbortError by default). */
  signal?: AbortSignal;
}

/** The reference clip a voice is made from, as uploaded and decoded. */
export interface ReferenceClip {
  /** The file as uploaded (what cloning providers receive). */
  bytes: Uint8Array;
  contentType: string;
  mono: Float32Array;
  sampleRate: number;
}

/** Everything an engine may derive a voice from. */
export interface VoiceSource {
  /** The voice's name (providers show it in their dashboards). */
  name: string;
  clip: ReferenceClip;
  analysis: VoiceAnalysis;
}

/** A voice as a session gets it: its id and what its engine stored when it was created. */
export interface EngineVoiceRef {
  voiceId: string;
  /** The JSON `createVoice` returned; null for catalogue voices. */
  stored: unknown;
}

/**
 * One session's line to an engine: providers keep their WebSocket open on it, so the first
 * sentence does not pay the connection.
 */
export interface SpeechChannel {
  /**
   * Streams `text` as it is synthesized: the first chunk comes as soon as the engine has audio,
   * not after the whole text. Aborting `signal` cancels at once (the provider is told) and ends
   * the iteration quietly. A failure mid-utterance throws from the iterator.
   */
  speak(text: string, signal: AbortSignal): AsyncIterable<SpeechChunk>;
  close(): void;
}

/** Thrown when a voice's stored data is not usable by its engine. */
export class VoiceUnavailableError extends Error {
  override readonly name = 'VoiceUnavailableError';
}

/**
 * A text-to-speech engine: `espeak` (offline default, matches pitch, vocal-tract size and rate),
 * `elevenlabs` and `cartesia` (hosted, clone the speaker's identity). Each engine owns what it
 * derives from a reference clip (espeak settings and calibration; a provider's voice id) and
 * stores it with the voice as JSON; sessions hand it back through `openChannel`.
 */
export interface TtsEngine {
  readonly id: TtsEngineId;
  /**
   * Make this engine's voice from a reference clip; the JSON result is stored with the voice.
   * Provider engines throw TtsProviderError / TtsProviderUnavailableError.
   */
  createVoice(source: VoiceSource, opts?: SynthesisOptions): Promise<unknown>;
  /** A channel speaking with `voice`; throws VoiceUnavailableError when it cannot. */
  openChannel(voice: EngineVoiceRef, log: Logger): SpeechChannel;
  /** Load and warm up (espeak) or check the key with the provider; throws when not usable. */
  prepare(): Promise<void>;
  /** Release engine resources. */
  close(): Promise<void>;
}
