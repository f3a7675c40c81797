// SPDX-License-Identifier: GPL-3.0-or-later
import type { Logger } from 'pino';
import {
  alignPhonemes,
  FEATURE_HOP_MS,
  SpeechFeatures,
  type PhonemeTiming,
} from '../lipsync/index.js';
import { DEFAULT_ESPEAK_VOICE, type EspeakEngine } from '../tts/index.js';

/** The words, spoken by a synthesizer, with their phoneme timings: what the audio is aligned to. */
export interface WordsTemplate {
  readonly pcm: Float32Array;
  readonly sampleRate: number;
  readonly phonemes: readonly PhonemeTiming[];
}

/** Speaks `text` to align it (the session uses espeak-ng's default voice, on its thread). */
export type SpeakWords = (text: string, signal: AbortSignal) => Promise<WordsTemplate>;

/** Called with the words' phonemes on the utterance's clock, valid up to `coveredMs`. */
export type PlaceWords = (phonemes: PhonemeTiming[], coveredMs: number) => void;

/** Words longer than this are not aligned (the mouth follows the audio alone). */
export const MAX_ALIGNED_CHARS = 2000;
/** Realign once this much more audio (ms) has arrived, while it streams. */
const REALIGN_EVERY_MS = 300;
/** The least time (ms) between two alignments of one utterance while it streams. */
const MIN_GAP_MS = 100;

/**
 * What an utterance's words say about its mouth, for audio that comes with its words but without
 * their timings (`/audio?text=`, an agent's TTS with its `lk.transcription`): the words are spoken
 * by a synthesizer, whose phoneme timings are known, and the two recordings are aligned
 * (`alignPhonemes`), again as more audio or more words arrive. Each alignment that fits is
 * handed to `place`; one that does not (other words, noise) places nothing, and the mouth
 * follows the audio alone.
 */
export class WordsAlignment {
  private readonly audio = new SpeechFeatures();
  private audioEnded = false;
  private text = '';
  private textFinal = false;
  private template:
    { text: string; frames: Float32Array; phonemes: readonly PhonemeTiming[] } | undefined;
  private speaking = false;
  private alignedFrames = 0;
  private closed = false;
  private readonly abort = new AbortController();
  private lastAlignedAt = -Infinity;
  private minGapMs = MIN_GAP_MS;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly speak: SpeakWords,
    private readonly place: PlaceWords,
    private readonly log: Logger,
  ) {}

  /** The words so far (each call gives all of them); `final` when no more will come. */
  setText(text: string, final: boolean): void {
    if (this.closed) return;
    const next = text.length > MAX_ALIGNED_CHARS ? '' : text;
    if (next === this.text && final === this.textFinal) return;
    this.text = next;
    this.textFinal = final;
    this.speakWords();
    this.realign(true);
  }

  /**
   * More of the utterance's audio (mono, any rate, the same rate throughout). `realign: false`
   * when the rest follows at once (a whole clip handed over in pieces).
   */
  pushAudio(pcm: Float32Array, sampleRate: number, realign = true): void {
    if (this.closed) return;
    this.audio.push(pcm, sampleRate);
    if (realign) this.realign(false);
  }

  /** All the audio has come. */
  endAudio(): void {
    if (this.closed || this.audioEnded) return;
    this.audio.end();
    this.audioEnded = true;
    this.realign(true);
  }

  /** Stops: no more synthesis, nothing more placed. */
  close(): void {
    this.closed = true;
    this.abort.abort();
    clearTimeout(this.timer);
  }

  private speakWords(): void {
    if (this.speaking || this.closed || this.text.trim() === '') return;
    if (this.template?.text === this.text) return;
    const text = this.text;
    this.speaking = true;
    this.speak(text, this.abort.signal)
      .then((speech) => {
        if (this.closed) return;
        const features = new SpeechFeatures();
        features.push(speech.pcm, speech.sampleRate);
        features.end();
        this.template = { text, frames: features.frames, phonemes: speech.phonemes };
      })
      .catch((err: unknown) => {
        if (!this.closed) this.log.warn({ err }, 'could not speak the words to align them');
      })
      .finally(() => {
        this.speaking = false;
        if (this.closed) return;
        this.realign(true);
        // The words grew while these were spoken.
        if (this.text !== text) this.speakWords();
      });
  }

  private realign(force: boolean): void {
    const template = this.template;
    if (!template || this.closed) return;
    const frames = this.audio.length;
    const grown = (frames - this.alignedFrames) * FEATURE_HOP_MS >= REALIGN_EVERY_MS;
    if (frames === 0 || !(force || grown)) return;
    const whole = this.audioEnded && this.textFinal && template.text === this.text;
    // An alignment costs the square of the audio's length on the event loop that paces every
    // avatar's audio and video: at most a fifth of it goes to this one, and the rest waits.
    const wait = this.lastAlignedAt + this.minGapMs - performance.now();
    if (wait > 0 && !whole) {
      this.timer ??= setTimeout(() => {
        this.timer = undefined;
        this.realign(true);
      }, wait);
      return;
    }
    this.alignedFrames = frames;
    const started = performance.now();
    const aligned = alignPhonemes({
      template: template.frames,
      phonemes: template.phonemes,
      audio: this.audio.frames,
      openEnd: !whole,
    });
    this.lastAlignedAt = performance.now();
    this.minGapMs = Math.max(MIN_GAP_MS, (this.lastAlignedAt - started) * 4);
    if (aligned) this.place(aligned.phonemes, aligned.coveredMs);
  }
}

/** The words spoken by espeak-ng in its default voice (on the engine's thread). */
export function espeakWords(engine: EspeakEngine): SpeakWords {
  return (text, signal) => engine.synthesizeWithSettings(text, DEFAULT_ESPEAK_VOICE, { signal });
}

/**
 * Words that arrive while their audio plays (an agent's `lk.transcription` stream): each `set`
 * gives all of them so far.
 */
export class LiveTranscript {
  private value = '';
  private done = false;
  private readonly listeners = new Set<() => void>();

  get text(): string {
    return this.value;
  }

  get final(): boolean {
    return this.done;
  }

  set(text: string, final: boolean): void {
    if (this.done || (text === this.value && final === this.done)) return;
    this.value = text;
    this.done = final;
    for (const listener of this.listeners) listener();
  }

  /** Calls `listener` on every change; returns the unsubscribe. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
