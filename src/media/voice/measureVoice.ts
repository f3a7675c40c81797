// SPDX-License-Identifier: GPL-3.0-or-later
import { resample } from '../audio/resample.js';
import { estimateFormants, FORMANT_ANALYSIS_RATE } from './lpcFormants.js';
import { pitchStatistics, PITCH_ANALYSIS_RATE, trackPitch } from './pitchTracker.js';
import { measureSpeakingRate } from './speakingRate.js';
import { spectralTiltDbPerOctave } from './spectralTilt.js';

/** Acoustic measurements of a speech signal (the reference clip or a synthesized probe). */
export interface VoiceMeasurement {
  pitch: { medianHz: number; p10Hz: number; p90Hz: number; spreadSemitones: number };
  formants: { f1Hz: number; f2Hz: number; f3Hz: number };
  syllablesPerSecond: number;
  spectralTiltDbPerOctave: number;
  /** Seconds of voiced speech the statistics rest on. */
  voicedSeconds: number;
  durationSeconds: number;
}

/**
 * Measure pitch (YIN at 8 kHz), formants (LPC at 10 kHz), speaking rate and spectral tilt, as a
 * sequence of steps (each `yield` is a point where a caller may let the event loop run).
 * About 0.15-0.3 s for a 30 s clip on an idle core; the clip is resampled once per analysis rate.
 */
export function* measureVoiceSteps(
  mono: Float32Array,
  sampleRate: number,
): Generator<void, VoiceMeasurement> {
  const pitchSignal =
    sampleRate === PITCH_ANALYSIS_RATE ? mono : resample(mono, sampleRate, PITCH_ANALYSIS_RATE);
  yield;
  // Statistics settle after ~15 s of speech; beyond that estimate F0 on every n-th frame.
  const decimate = Math.max(1, Math.round(mono.length / sampleRate / 15));
  const track = trackPitch(pitchSignal, PITCH_ANALYSIS_RATE, { threshold: 0.25, decimate });
  const pitch = pitchStatistics(track);
  yield;

  // Centres of voiced frames within the octave-error-free band around the median.
  const windowCentreMs = 15;
  const voicedTimesMs: number[] = [];
  track.f0.forEach((f0, i) => {
    if (f0 > pitch.medianHz * 0.55 && f0 < pitch.medianHz * 1.8) {
      voicedTimesMs.push(i * track.hopMs + windowCentreMs);
    }
  });

  const formantSignal =
    sampleRate === FORMANT_ANALYSIS_RATE ? mono : resample(mono, sampleRate, FORMANT_ANALYSIS_RATE);
  yield;
  const formants = estimateFormants(formantSignal, FORMANT_ANALYSIS_RATE, voicedTimesMs);
  const rate = measureSpeakingRate(track);
  const tilt = spectralTiltDbPerOctave(formantSignal, FORMANT_ANALYSIS_RATE, voicedTimesMs);
  return {
    pitch: {
      medianHz: pitch.medianHz,
      p10Hz: pitch.p10Hz,
      p90Hz: pitch.p90Hz,
      spreadSemitones: pitch.spreadSemitones,
    },
    formants: { f1Hz: formants.f1Hz, f2Hz: formants.f2Hz, f3Hz: formants.f3Hz },
    syllablesPerSecond: rate.syllablesPerSecond,
    spectralTiltDbPerOctave: tilt,
    voicedSeconds: (pitch.voicedFrames * track.hopMs) / 1000,
    durationSeconds: mono.length / sampleRate,
  };
}

/** `measureVoiceSteps` run to completion synchronously. */
export function measureVoice(mono: Float32Array, sampleRate: number): VoiceMeasurement {
  const steps = measureVoiceSteps(mono, sampleRate);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** `measureVoiceSteps` with the event loop let through between steps. */
export async function measureVoiceAsync(
  mono: Float32Array,
  sampleRate: number,
): Promise<VoiceMeasurement> {
  const steps = measureVoiceSteps(mono, sampleRate);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}
