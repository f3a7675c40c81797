// SPDX-License-Identifier: GPL-3.0-or-later
import type { Logger } from 'pino';
import { calibrateEspeakVoice } from './calibrateEspeakVoice.js';
import {
  espeakRuntime,
  rawEspeakSynthesis,
  type EspeakEvent,
  type EspeakRuntime,
  type RawSynthesisRequest,
  type RawSynthesisResult,
} from './espeakRuntime.js';
import { sharedEspeakThread } from './espeakThread.js';
import { espeakTimings } from './espeakTimings.js';
import {
  DEFAULT_ESPEAK_VOICE,
  espeakVariantFile,
  espeakVariantName,
  normalizeEspeakVoice,
  type EspeakVoiceSettings,
} from './espeakVoiceSettings.js';
import type { EspeakVoiceProfile } from './espeakVoiceProfile.js';
import { VoiceProfileUnavailableError, voiceProfileFor } from './espeakVoiceProfileSchema.js';
import { synthesizeSentences } from './synthesizeSentences.js';
import {
  VoiceUnavailableError,
  type EngineVoiceRef,
  type SpeechChannel,
  type SynthesisOptions,
  type SynthesisResult,
  type TtsEngine,
  type VoiceSource,
} from './ttsEngine.js';

const ESPEAK_SAMPLE_RATE = 22050;
const WARM_UP_TEXT =
  'Good morning! The quick brown fox jumps over the lazy dog while our avatar keeps talking.';
const WARM_UP_VOICE = { ...DEFAULT_ESPEAK_VOICE, pitchBaseHz: 140, pitchTopHz: 210, range: 40 };
const WARM_MS = 40;
let warmedUpInline: Promise<void> | undefined;

/** The request for one chunk, or undefined when there is nothing to say. */
function espeakRequest(
  text: string,
  settings: EspeakVoiceSettings,
): RawSynthesisRequest | undefined {
  // This espeak-ng build parses SSML. Caller text is plain text: markup must not reach it (a
  // `<break time="3600s"/>` would synthesize an hour of silence), so `<`, `>` and entity
  // ampersands become spaces. Control characters go too. Replacements are one character for one,
  // so espeak's text positions still index the caller's text.
  const clean = text
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f<>]/g, ' ')
    .replace(/&(?=#?\w+;)/g, ' ');
  if (clean.trim() === '') return undefined;
  const voice = normalizeEspeakVoice(settings);
  const variantName = espeakVariantName(voice);
  return {
    text: clean,
    voiceName: `${voice.voice}+${variantName}`,
    variantName,
    variantFile: espeakVariantFile(voice),
    wordsPerMinute: voice.wordsPerMinute,
    range: voice.range,
  };
}

function toFloat(samples: Int16Array): Float32Array {
  const pcm = new Float32Array(samples.length);
  for (let i = 0; i < pcm.length; i++) pcm[i] = samples[i]! / 32768;
  return pcm;
}

function toSynthesisResult(text: string, raw: RawSynthesisResult): SynthesisResult {
  const pcm = toFloat(raw.pcm);
  const { words, phonemes } = espeakTimings(text, raw.events, pcm, raw.sampleRate);
  return { sampleRate: raw.sampleRate, pcm, words, phonemes };
}

function silence(sampleRate: number): SynthesisResult {
  return { sampleRate, pcm: new Float32Array(0), words: [], phonemes: [] };
}

/**
 * Synthesize one chunk with espeak-ng on the calling thread, synchronously (15-50 ms per
 * sentence once warm). Used by voice calibration, which runs many short probes.
 */
export function synthesizeWithEspeak(
  runtime: EspeakRuntime,
  text: string,
  settings: EspeakVoiceSettings,
): SynthesisResult {
  const request = espeakRequest(text, settings);
  if (!request) return silence(runtime.sampleRate);
  return toSynthesisResult(request.text, rawEspeakSynthesis(runtime, request));
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error as Error);
      },
    );
  });
}

/** Synthesis options of the espeak engine. */
export interface EspeakSynthesisOptions extends SynthesisOptions {
  /**
   * Sees the audio (float, the engine's rate) in the pieces espeak-ng produces it, with the raw
   * events it reported with each piece (see `espeakTimings`), before the whole result is ready:
   * on the worker thread only (inline synthesis returns all at once).
   */
  onAudio?: (pcm: Float32Array, sampleRate: number, events: readonly EspeakEvent[]) => void;
}

export interface EspeakEngineOptions {
  /**
   * `thread` (default): synthesize on a dedicated thread shared by the process, so the event
   * loop stays free for audio pacing and video. `caller`: on the calling thread, for code that
   * already runs off the main thread (no extra thread, no message hop).
   */
  runsOn?: 'thread' | 'caller';
}

/**
 * The offline default engine: espeak-ng (pure JS build), 22 050 Hz mono, word and IPA phoneme
 * timings. Its voices are EspeakVoiceProfiles: espeak settings (pitch, range, formant scale, rate)
 * calibrated to the speaker's analysis. It matches a speaker's pitch, vocal-tract size and rate,
 * not their identity.
 */
export class EspeakEngine implements TtsEngine {
  readonly id = 'espeak';
  readonly runsOn: 'thread' | 'caller';

  constructor(opts: EspeakEngineOptions = {}) {
    this.runsOn = opts.runsOn ?? 'thread';
  }

  /**
   * Load espeak-ng and run it until the JS engine has optimised it: the first sentences of a
   * fresh thread take 300-600 ms, later ones 15-30 ms. Call at startup so the first `speak` is
   * fast. Idempotent and shared per thread (about 1-2 s once).
   */
  warmUp({ firstRun = false } = {}): Promise<void> {
    const request = (i: number) =>
      espeakRequest(WARM_UP_TEXT, i % 2 ? DEFAULT_ESPEAK_VOICE : WARM_UP_VOICE)!;
    if (this.runsOn === 'thread') return sharedEspeakThread().warmUp(request, { firstRun });
    warmedUpInline ??= espeakRuntime().then((runtime) => {
      // Alternate two voices so the variant-switching path is optimised too; stop after two
      // consecutive fast runs.
      let fast = 0;
      for (let i = 0; i < 12 && fast < 2; i++) {
        const started = performance.now();
        rawEspeakSynthesis(runtime, request(i));
        fast = performance.now() - started < WARM_MS ? fast + 1 : 0;
      }
    });
    warmedUpInline.catch(() => {
      warmedUpInline = undefined;
    });
    return warmedUpInline;
  }

  /**
   * Loads espeak-ng and has it speak once; the JIT warm-up goes on behind (on its thread). A
   * start-up waited for the whole warm-up before: 1-2 s of CPU per process on a quiet machine,
   * the twelve runs (4 to 6 s) on a busy one, where the runs never get fast. A `speak` in the
   * first seconds then waits for one warm-up run at most. Inline, the whole warm-up: it holds
   * the thread it runs on anyway.
   */
  prepare(): Promise<void> {
    return this.warmUp({ firstRun: true });
  }

  /** Calibrates espeak settings to the speaker (see calibrateEspeakVoice). */
  createVoice(source: VoiceSource): Promise<EspeakVoiceProfile> {
    return calibrateEspeakVoice(source.analysis, this);
  }

  openChannel(voice: EngineVoiceRef, _log: Logger): SpeechChannel {
    let profile: EspeakVoiceProfile;
    try {
      profile = voiceProfileFor(voice.voiceId, voice.stored);
    } catch (err) {
      if (err instanceof VoiceProfileUnavailableError) {
        throw new VoiceUnavailableError(err.message, { cause: err });
      }
      throw err;
    }
    return {
      speak: (text, signal) => synthesizeSentences(this, text, profile, { signal }),
      close: () => undefined,
    };
  }

  synthesize(
    text: string,
    voice: EspeakVoiceProfile,
    opts: EspeakSynthesisOptions = {},
  ): Promise<SynthesisResult> {
    return this.synthesizeWithSettings(text, voice.espeak, opts);
  }

  /** Synthesize with explicit espeak settings (voice calibration probes these directly). */
  async synthesizeWithSettings(
    text: string,
    settings: EspeakVoiceSettings,
    opts: EspeakSynthesisOptions = {},
  ): Promise<SynthesisResult> {
    opts.signal?.throwIfAborted();
    const request = espeakRequest(text, settings);
    if (this.runsOn === 'thread') {
      if (!request) return silence(ESPEAK_SAMPLE_RATE);
      const { onAudio, signal } = opts;
      const onPart = onAudio
        ? (part: Int16Array, sampleRate: number, events: EspeakEvent[]) => {
            if (!signal?.aborted) onAudio(toFloat(part), sampleRate, events);
          }
        : undefined;
      const raw = await abortable(sharedEspeakThread().synthesize(request, onPart), signal);
      return toSynthesisResult(request.text, raw);
    }
    const runtime = await espeakRuntime();
    opts.signal?.throwIfAborted();
    if (!request) return silence(runtime.sampleRate);
    return toSynthesisResult(request.text, rawEspeakSynthesis(runtime, request));
  }

  /**
   * Nothing to release per engine: the synthesis thread is shared by every engine in the
   * process and does not keep it alive when idle. Stop it at shutdown with `stopEspeakThread()`.
   */
  async close(): Promise<void> {}
}
