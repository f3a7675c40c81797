import type { VoiceProfile } from '../voice/voiceProfile.js';
import { espeakRuntime, type EspeakEvent, type EspeakRuntime } from './espeakRuntime.js';
import { espeakTimings } from './espeakTimings.js';
import {
  DEFAULT_ESPEAK_VOICE,
  espeakVariantFile,
  espeakVariantName,
  normalizeEspeakVoice,
  type EspeakVoiceSettings,
} from './espeakVoiceSettings.js';
import type {
  SynthesisOptions,
  SynthesisResult,
  TtsEngine,
  TtsEngineCapabilities,
} from './ttsEngine.js';

const WARM_UP_TEXT =
  'Good morning! The quick brown fox jumps over the lazy dog while our avatar keeps talking.';
const WARM_UP_VOICE = { ...DEFAULT_ESPEAK_VOICE, pitchBaseHz: 140, pitchTopHz: 210, range: 40 };
const WARM_MS = 40;
let warmedUp: Promise<void> | undefined;

/**
 * Synthesize one chunk with espeak-ng, synchronously (about 25-50 ms per sentence once warm).
 * Exposed for voice calibration, which needs many short syntheses without the async hop.
 */
export function synthesizeWithEspeak(
  runtime: EspeakRuntime,
  text: string,
  settings: EspeakVoiceSettings,
): SynthesisResult {
  const sampleRate = runtime.sampleRate;
  // Control characters confuse espeak's text position counting; they are never spoken anyway.
  // eslint-disable-next-line no-control-regex
  const clean = text.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, ' ');
  if (clean.trim() === '') return { sampleRate, pcm: new Float32Array(0), words: [], phonemes: [] };

  const voice = normalizeEspeakVoice(settings);
  const variant = espeakVariantName(voice);
  runtime.ensureVariant(variant, espeakVariantFile(voice));
  const { worker } = runtime;
  if (worker.set_voice(`${voice.voice}+${variant}`) !== 0) {
    throw new Error(`espeak-ng has no voice named ${voice.voice}`);
  }
  worker.set_rate(voice.wordsPerMinute);
  worker.set_range(voice.range);
  worker.set_pitch(50); // neutral: the variant's pitch line carries the voice's pitch

  const chunks: Int16Array[] = [];
  const events: EspeakEvent[] = [];
  let length = 0;
  worker.synthesize(clean, (pcm, chunkEvents) => {
    chunks.push(pcm);
    length += pcm.length;
    for (const e of chunkEvents) events.push(e);
    return false;
  });
  const pcm = new Float32Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    for (let i = 0; i < chunk.length; i++) pcm[offset + i] = chunk[i]! / 32768;
    offset += chunk.length;
  }
  const { words, phonemes } = espeakTimings(clean, events, pcm, sampleRate);
  return { sampleRate, pcm, words, phonemes };
}

/**
 * The offline default engine: espeak-ng (pure JS build), 22 050 Hz mono, word and IPA phoneme
 * timings. Voices come from `VoiceProfile.espeak`: pitch, range, formant scale and rate. It
 * matches a speaker's pitch, vocal-tract size and rate, not their identity.
 *
 * Synthesis runs on the calling thread and blocks it for the duration of one chunk (tens of ms
 * per sentence); run the engine in a worker thread when many sessions share a process.
 */
export class EspeakEngine implements TtsEngine {
  readonly id = 'espeak';
  readonly capabilities: TtsEngineCapabilities = {
    wordTimings: true,
    phonemeTimings: true,
    cloning: false,
  };

  /**
   * Load espeak-ng and run it until the JS engine has optimised it: the first sentences of a
   * fresh thread take 300-600 ms, later ones 15-30 ms. Call at startup so the first `speak` is
   * fast. Idempotent and shared by all engines on the thread (about 1-1.5 s once).
   */
  warmUp(): Promise<void> {
    warmedUp ??= espeakRuntime().then((runtime) => {
      // Alternate two voices so the variant-switching path is optimised too; stop after two
      // consecutive fast runs.
      let fast = 0;
      for (let i = 0; i < 12 && fast < 2; i++) {
        const started = performance.now();
        synthesizeWithEspeak(runtime, WARM_UP_TEXT, i % 2 ? DEFAULT_ESPEAK_VOICE : WARM_UP_VOICE);
        fast = performance.now() - started < WARM_MS ? fast + 1 : 0;
      }
    });
    warmedUp.catch(() => {
      warmedUp = undefined;
    });
    return warmedUp;
  }

  async synthesize(
    text: string,
    voice: VoiceProfile,
    opts: SynthesisOptions = {},
  ): Promise<SynthesisResult> {
    opts.signal?.throwIfAborted();
    const runtime = await espeakRuntime();
    opts.signal?.throwIfAborted();
    return synthesizeWithEspeak(runtime, text, voice.espeak);
  }
}
