// SPDX-License-Identifier: GPL-3.0-or-later
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeAudio, UnreadableAudioError } from '../../../src/media/audio/index.js';
import {
  calibrateEspeakVoice,
  EspeakEngine,
  stockVoiceProfile,
  stopEspeakThread,
  type EspeakVoiceProfile,
} from '../../../src/media/tts/index.js';
import { analyzeVoiceClip as analyze, measureVoice } from '../../../src/media/voice/index.js';
import { AVATAR_CATALOGUE } from '../../../src/media/avatarCatalogue.js';

// References come from a different synthesizer than the one under test: Debian flite's "rms"
// (male) and "slt" (female) voices, encoded as Ogg Opus and MP3 like real uploads. A third one is
// Debian espeak-ng's f3 variant at a raised pitch with room reverb, band-limiting and pink noise.
const clip = async (name: string) =>
  decodeAudio(
    new Uint8Array(readFileSync(new URL(`../../fixtures/audio/${name}`, import.meta.url))),
  );

// Text the probe never saw, so the check is not fitted to the calibration sentence.
const CHECK_TEXT =
  'Please remember to bring your notebook and a pencil to class tomorrow afternoon.';
const F0_TOLERANCE = 0.05; // output median F0 within 5 % of the reference's, on new text

const engine = new EspeakEngine();
const profiles: Record<string, EspeakVoiceProfile> = {};
const analyzeVoiceClip = async (mono: Float32Array, sampleRate: number) =>
  calibrateEspeakVoice(await analyze(mono, sampleRate), engine);

beforeAll(async () => {
  for (const name of [
    'voice-flite-rms-male.ogg',
    'voice-flite-slt-female.mp3',
    'voice-espeak-f3-roomy.ogg',
  ]) {
    const audio = await clip(name);
    profiles[name] = await analyzeVoiceClip(audio.mono, audio.sampleRate);
  }
}, 60_000);

afterAll(async () => {
  await stopEspeakThread();
});

describe('analyzeVoiceClip', () => {
  it('gives measurably different profiles for a low male and a high female speaker', () => {
    const male = profiles['voice-flite-rms-male.ogg']!;
    const female = profiles['voice-flite-slt-female.mp3']!;
    // Reference pitch as measured (flite rms ~100 Hz, slt ~165 Hz).
    expect(male.pitch.medianHz).toBeGreaterThan(90);
    expect(male.pitch.medianHz).toBeLessThan(112);
    expect(female.pitch.medianHz).toBeGreaterThan(150);
    expect(female.pitch.medianHz).toBeLessThan(180);
    // Shorter vocal tract: higher F3, mapped to a larger formant scale.
    expect(female.formants.f3Hz).toBeGreaterThan(male.formants.f3Hz * 1.08);
    expect(female.espeak.formantPercent).toBeGreaterThan(male.espeak.formantPercent + 8);
    expect(female.espeak.pitchBaseHz).toBeGreaterThan(male.espeak.pitchBaseHz * 1.4);
    expect(JSON.parse(JSON.stringify(male))).toEqual(male); // plain JSON
    expect(male.source).toBe('clip');
  });

  it('closes the loop: the probe output F0 is within 2 % of each reference', () => {
    for (const [name, p] of Object.entries(profiles)) {
      expect(Math.abs(p.calibration!.f0ErrorPercent), name).toBeLessThan(2);
      expect(p.calibration!.outputMedianHz).toBeGreaterThan(0);
    }
  });

  for (const name of [
    'voice-flite-rms-male.ogg',
    'voice-flite-slt-female.mp3',
    'voice-espeak-f3-roomy.ogg',
  ]) {
    it(`re-synthesizes new text with ${name}'s pitch (within ${F0_TOLERANCE * 100} %)`, async () => {
      const p = profiles[name]!;
      const out = await engine.synthesize(CHECK_TEXT, p);
      const measured = measureVoice(out.pcm, out.sampleRate);
      expect(Math.abs(measured.pitch.medianHz / p.pitch.medianHz - 1)).toBeLessThan(F0_TOLERANCE);
      // Apparent vocal-tract size follows within 10 % (formant scaling is capped at 125 %).
      expect(Math.abs(measured.formants.f3Hz / p.formants.f3Hz - 1)).toBeLessThan(0.1);
    });
  }

  it('builds a voice from a 30 s clip in well under two seconds of CPU', async () => {
    const audio = await clip('voice-flite-slt-female.mp3');
    const repeats = Math.ceil((30 * audio.sampleRate) / audio.mono.length);
    const long = new Float32Array(audio.mono.length * repeats);
    for (let i = 0; i < repeats; i++) long.set(audio.mono, i * audio.mono.length);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    const cpu = process.cpuUsage();
    const profile = await analyzeVoiceClip(long, audio.sampleRate);
    const { user, system } = process.cpuUsage(cpu);
    clearInterval(timer);
    // CPU time of this process (all its threads, the espeak thread included), so that a busy
    // machine does not fail the test. Wall time is the machine's: `npm run bench -- voiceBuild`
    // measures it (0.66 s median on this 2-core machine at load 7; 9.8 s at load 10 failed the 8 s
    // bound that stood here).
    expect((user + system) / 1000).toBeLessThan(2000);
    // It yields to the event loop between analysis steps and probes instead of one long block.
    expect(ticks).toBeGreaterThanOrEqual(4);
    expect(
      Math.abs(profile.pitch.medianHz / profiles['voice-flite-slt-female.mp3']!.pitch.medianHz - 1),
    ).toBeLessThan(0.02);
  });

  it('refuses a clip without voiced speech as unreadable audio', async () => {
    let seed = 7;
    const noise = Float32Array.from({ length: 16000 * 3 }, () => {
      seed = (seed * 1103515245 + 12345) >>> 0;
      return (seed / 2 ** 32 - 0.5) * 0.3;
    });
    await expect(analyzeVoiceClip(noise, 16000)).rejects.toBeInstanceOf(UnreadableAudioError);
    await expect(analyzeVoiceClip(new Float32Array(48000), 48000)).rejects.toBeInstanceOf(
      UnreadableAudioError,
    );
  });
});

describe('stockVoiceProfile', () => {
  it('has a profile for every catalogue voice and none for other ids', () => {
    for (const avatar of AVATAR_CATALOGUE) {
      const p = stockVoiceProfile(avatar.defaultVoice.voiceId);
      expect(p, avatar.name).toBeDefined();
      expect(p!.source).toBe('stock');
      const female = avatar.defaultVoice.speaker === 'female';
      expect(p!.pitch.medianHz > 160, avatar.name).toBe(female);
    }
    expect(stockVoiceProfile('voice_nope')).toBeUndefined();
  });

  it('speaks each stock voice near its designed pitch (within 5 %)', async () => {
    for (const avatar of AVATAR_CATALOGUE) {
      const p = stockVoiceProfile(avatar.defaultVoice.voiceId)!;
      const out = await engine.synthesize(CHECK_TEXT, p);
      const f0 = measureVoice(out.pcm, out.sampleRate).pitch.medianHz;
      expect(Math.abs(f0 / p.pitch.medianHz - 1), avatar.name).toBeLessThan(0.05);
    }
  });
});
