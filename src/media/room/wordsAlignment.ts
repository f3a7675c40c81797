// SPDX-License-Identifier: GPL-3.0-or-later
import type { Logger } from 'pino';
import {
  FEATURE_HOP_MS,
  SpeechFeatures,
  TailAlignment,
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
/**
 * Realign once this much more audio (ms) has arrived, while it streams: audio that comes at real
 * time is heard some tens of ms after it arrives, and its words must be placed by then.
 */
const REALIGN_EVERY_MS = 50;
/** The least time (ms) between two alignments of one utterance while it streams. */
const MIN_GAP_MS = 20;

/**
 * What an utterance's words say about its mouth, for audio that comes with its words but without
 * their timings (`/audio?text=`, an agent's TTS with its `lk.transcription`): the words are spoken
 * by a synthesizer, whose phoneme timings are known, and the two recordings are aligned
 * (`TailAlignment`: each time only the audio since the last settled phoneme, so that each costs
 * about the same however long the utterance), again as more audio or more words arrive. Each
 * alignment that fits is handed to `place`; one that does not (other words, noise) places
 * nothing, and the mouth follows the audio alone.
 */
export class WordsAlignment {
  private readonly audio = new SpeechFeatures();
  private audioEnded = false;
  private text = '';
  private textFinal = false;
  private templateText: string | undefined;
  private readonly tail = new TailAlignment();
  private speaking = false;
  private alignedFrames = 0;
  private closed = false;
  private readonly abort = new AbortController();
  private lastAlignedAt = -Infinity;
  private minGapMs = MIN_GAP_MS;
  /**
   * The least time per cell of the warping seen so far: an alignment's wall time on a busy
   * machine includes the time other processes had the CPU, the least one is nearest its cost.
   */
  private msPerCell = Infinity;
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
    if (this.templateText === this.text) return;
    const text = this.text;
    this.speaking = true;
    this.speak(text, this.abort.signal)
      .then((speech) => {
        if (this.closed) return;
        const features = new SpeechFeatures();
        features.push(speech.pcm, speech.sampleRate);
        features.end();
        this.templateText = text;
        this.tail.setTemplate(features.frames, speech.phonemes);
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
    if (this.templateText === undefined || this.closed) return;
    const frames = this.audio.length;
    const grown = (frames - this.alignedFrames) * FEATURE_HOP_MS >= REALIGN_EVERY_MS;
    if (frames === 0 || !(force || grown)) return;
    const whole = this.audioEnded && this.textFinal && this.templateText === this.text;
    // Past the words known so far, more audio places nothing until more words come.
    if (!whole && !this.tail.wantsMore) return;
    // An alignment runs on the event loop that paces every avatar's audio and video: at most a
    // fifth of it goes to this one (by its cost, `msPerCell`), and the rest waits.
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
    const aligned = this.tail.align(this.audio.frames, !whole);
    this.lastAlignedAt = performance.now();
    const tookMs = this.lastAlignedAt - started;
    if (aligned) {
      const cells = aligned.audioFrames * aligned.templateFrames;
      this.msPerCell = Math.min(this.msPerCell, tookMs / Math.max(1, cells));
      this.minGapMs = Math.max(MIN_GAP_MS, cells * this.msPerCell * 4);
    } else this.minGapMs = Math.max(MIN_GAP_MS, tookMs * 4);
    this.log.debug(
      {
        tookMs: Math.round(tookMs * 10) / 10,
        gapMs: Math.round(this.minGapMs),
        audioMs: frames * FEATURE_HOP_MS,
        tailMs: aligned ? aligned.audioFrames * FEATURE_HOP_MS : undefined,
        whole,
        coveredMs: aligned?.coveredMs,
        mismatch: aligned ? Math.round(aligned.mismatch * 100) / 100 : undefined,
      },
      aligned ? 'words aligned to the audio' : 'the words do not fit the audio',
    );
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
