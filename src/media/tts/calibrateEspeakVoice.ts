// SPDX-License-Identifier: GPL-3.0-or-later
import type { VoiceAnalysis } from '../voice/analyzeVoiceClip.js';
import { measureVoice } from '../voice/measureVoice.js';
import { pitchStatistics, trackPitch } from '../voice/pitchTracker.js';
import type { EspeakEngine } from './espeakEngine.js';
import { espeakPitchFor, medianGain, spreadForRange, TOP_OVER_BASE } from './espeakPitchModel.js';
import type { EspeakVoiceProfile } from './espeakVoiceProfile.js';
import {
  DEFAULT_ESPEAK_VOICE,
  normalizeEspeakVoice,
  type EspeakVoiceSettings,
} from './espeakVoiceSettings.js';

/**
 * The espeak engine's voice for a speaker: map the clip's analysis to espeak-ng settings, then
 * close the loop: synthesize a fixed probe sentence with those
 * settings, measure what came out, and correct pitch base and range (and, after the first probe,
 * formant scale and rate) until the output's median F0 is within 1.5 % of the reference and its
 * p10-p90 spread within 0.7 semitones (at most five probes; the best probe's settings win).
 *
 * What this reproduces: pitch level and range, apparent vocal-tract size (formant scaling from
 * F3) and speaking rate. What it does not: the speaker's identity (timbre, accent, voice
 * quality), which needs a neural cloning engine.
 *
 * Cost: ~50 ms per probe (at most five), plus once per process
 * the engine warm-up (1-2 s) and a baseline measurement of espeak's own voice.
 */

const PROBE_TEXT =
  'Every morning I walk down to the station, buy a paper, and read it on the train into town.';
const F0_TOLERANCE = 0.015;
/** Semitones of p10-p90 spread error accepted before range is corrected. */
const SPREAD_TOLERANCE = 0.7;
const MAX_PROBES = 5;

interface Baseline {
  f3Hz: number;
  syllablesPerSecond: number;
}

let baseline: Promise<Baseline> | undefined;

/** espeak's own voice on the probe: the reference point for formant scale and rate. */
function espeakBaseline(engine: EspeakEngine): Promise<Baseline> {
  baseline ??= engine.synthesizeWithSettings(PROBE_TEXT, DEFAULT_ESPEAK_VOICE).then((out) => {
    const m = measureVoice(out.pcm, out.sampleRate);
    return { f3Hz: m.formants.f3Hz, syllablesPerSecond: m.syllablesPerSecond };
  });
  baseline.catch(() => {
    baseline = undefined;
  });
  return baseline;
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

function toProfile(
  reference: VoiceAnalysis,
  espeak: EspeakVoiceSettings,
  calibration: EspeakVoiceProfile['calibration'],
): EspeakVoiceProfile {
  return {
    schema: 'visage.voice-profile/1',
    source: 'clip',
    pitch: { ...reference.pitch },
    formants: { ...reference.formants },
    syllablesPerSecond: reference.syllablesPerSecond,
    spectralTiltDbPerOctave: reference.spectralTiltDbPerOctave,
    espeak,
    calibration,
  };
}

/** Calibrate espeak settings to `reference`, probing with `engine` (warmed up here if needed). */
export async function calibrateEspeakVoice(
  reference: VoiceAnalysis,
  engine: EspeakEngine,
): Promise<EspeakVoiceProfile> {
  const started = performance.now();
  await engine.warmUp();
  const base = await espeakBaseline(engine);

  let settings = normalizeEspeakVoice({
    ...DEFAULT_ESPEAK_VOICE,
    ...espeakPitchFor(reference.pitch.medianHz, reference.pitch.spreadSemitones),
    formantPercent:
      base.f3Hz > 0 && reference.formants.f3Hz > 0
        ? (100 * reference.formants.f3Hz) / base.f3Hz
        : 100,
    wordsPerMinute:
      base.syllablesPerSecond > 0 && reference.syllablesPerSecond > 0
        ? (DEFAULT_ESPEAK_VOICE.wordsPerMinute * reference.syllablesPerSecond) /
          base.syllablesPerSecond
        : DEFAULT_ESPEAK_VOICE.wordsPerMinute,
  });

  // Probe 1 also corrects formant scale and rate (measured on the full probe); those stay fixed
  // afterwards, so only probes made with the final values compete for "best". Later probes tune
  // pitch base (median F0) and range (p10-p90 spread).
  let best: { settings: EspeakVoiceSettings; score: number; error: number; outputMedianHz: number };
  best = { settings, score: Infinity, error: 0, outputMedianHz: 0 };
  let finalFrom = 1;
  let probes = 0;
  while (probes < MAX_PROBES) {
    const out = await engine.synthesizeWithSettings(PROBE_TEXT, settings);
    probes++;
    const full = probes === 1 ? measureVoice(out.pcm, out.sampleRate) : undefined;
    const pitch =
      full?.pitch ?? pitchStatistics(trackPitch(out.pcm, out.sampleRate, { threshold: 0.25 }));
    if (!(pitch.medianHz > 0)) break;
    const ratio = pitch.medianHz / reference.pitch.medianHz;
    const spreadError = reference.pitch.spreadSemitones - pitch.spreadSemitones;
    const rangeStuck =
      (spreadError > 0 && settings.range >= 100) || (spreadError < 0 && settings.range <= 0);
    const spreadOff = Math.abs(spreadError) > SPREAD_TOLERANCE && !rangeStuck;
    if (probes >= finalFrom) {
      const score =
        Math.abs(ratio - 1) / F0_TOLERANCE +
        (rangeStuck ? 0 : (0.5 * Math.abs(spreadError)) / SPREAD_TOLERANCE);
      if (score < best.score) {
        best = { settings, score, error: ratio - 1, outputMedianHz: pitch.medianHz };
      }
    }

    let { range, formantPercent, wordsPerMinute } = settings;
    if (full) {
      if (full.formants.f3Hz > 0 && reference.formants.f3Hz > 0) {
        formantPercent *= reference.formants.f3Hz / full.formants.f3Hz;
      }
      if (full.syllablesPerSecond > 0 && reference.syllablesPerSecond > 0) {
        wordsPerMinute *= reference.syllablesPerSecond / full.syllablesPerSecond;
      }
      const corrected = normalizeEspeakVoice({ ...settings, formantPercent, wordsPerMinute });
      if (
        corrected.formantPercent !== settings.formantPercent ||
        Math.abs(corrected.wordsPerMinute - settings.wordsPerMinute) > 3
      ) {
        finalFrom = 2;
      }
    }
    if (Math.abs(ratio - 1) <= F0_TOLERANCE && !spreadOff && probes >= finalFrom) break;

    let pitchBaseHz = settings.pitchBaseHz / ratio;
    if (spreadOff) {
      const newRange = clamp(
        range + (0.8 * spreadError) / (spreadForRange(1) - spreadForRange(0)),
        0,
        100,
      );
      // Keep the median where the corrected base puts it.
      pitchBaseHz *= medianGain(range, pitchBaseHz) / medianGain(newRange, pitchBaseHz);
      range = newRange;
    }
    settings = normalizeEspeakVoice({
      ...settings,
      pitchBaseHz,
      pitchTopHz: pitchBaseHz * TOP_OVER_BASE,
      range,
      formantPercent,
      wordsPerMinute,
    });
  }

  return toProfile(reference, best.settings, {
    outputMedianHz: best.outputMedianHz,
    f0ErrorPercent: 100 * best.error,
    iterations: probes,
    buildMs: performance.now() - started,
  });
}
