// SPDX-License-Identifier: GPL-3.0-or-later
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { AudioMouthTracker } from '../../../src/media/lipsync/audioMouthTracker.js';
import { ipaToVisemeUnits } from '../../../src/media/lipsync/ipaVisemes.js';
import { speechMouth } from '../../../src/media/lipsync/speechMouth.js';
import type { MouthPose } from '../../../src/media/lipsync/viseme.js';
import { AVATAR_CATALOGUE } from '../../../src/media/avatarCatalogue.js';
import { synthesizeWithEspeak } from '../../../src/media/tts/espeakEngine.js';
import { espeakRuntime } from '../../../src/media/tts/espeakRuntime.js';
import { stockVoiceProfile } from '../../../src/media/tts/espeakStockVoices.js';
import { createFaceRenderer, measureMouthOpening } from '../../../src/media/render/index.js';
import { loadCatalogueAtlases } from '../../support/catalogueAtlases.js';
import {
  mouthPoseAt,
  visemeTimeline,
  type PhonemeTiming,
} from '../../../src/media/lipsync/visemeTimeline.js';

/**
 * Real speech: espeak-ng reading "Who would know how much wood I could move? Please choose a
 * fast, shiny ball." with its phoneme timings (fixtures/espeak-ada.*, 22 050 Hz s16le).
 */
const meta = JSON.parse(
  readFileSync(new URL('./fixtures/espeak-ada.json', import.meta.url), 'utf8'),
) as {
  sampleRate: number;
  phonemes: PhonemeTiming[];
};
const raw = readFileSync(new URL('./fixtures/espeak-ada.s16le', import.meta.url));
const pcm = new Int16Array(raw.buffer, raw.byteOffset, raw.byteLength / 2);
const durationMs = (pcm.length / meta.sampleRate) * 1000;

function phonemeAt(t: number): PhonemeTiming | undefined {
  return meta.phonemes.find((p) => p.startMs <= t && t < p.endMs);
}
const firstUnit = (p: PhonemeTiming | undefined): string | undefined =>
  p ? ipaToVisemeUnits(p.ipa, p.stressed)[0]?.viseme : undefined;

describe('lip-sync on real speech', () => {
  // The catalogue's atlases as drawn once for the run (catalogueAtlases.ts).
  beforeAll(() => loadCatalogueAtlases(), 120_000);

  const tracker = new AudioMouthTracker({ leadMs: 0 });
  // As a session feeds it: 100 ms chunks.
  const chunk = Math.round(meta.sampleRate / 10);
  for (let i = 0; i < pcm.length; i += chunk)
    tracker.push(pcm.subarray(i, i + chunk), meta.sampleRate);
  const timeline = visemeTimeline(meta.phonemes);
  const frames: number[] = [];
  for (let t = 0; t < durationMs; t += 40) frames.push(t);

  it('timeline: the mouth moves with the phonemes, without one-frame flicker', () => {
    const poses = frames.map((t) => mouthPoseAt(timeline, t));
    const open = poses.filter((p) => p.openness > 0.3).length;
    expect(open / poses.length).toBeGreaterThan(0.3);
    let flicker = 0;
    for (let i = 1; i + 1 < poses.length; i++) {
      const [a, b, c] = [poses[i - 1]!, poses[i]!, poses[i + 1]!];
      if (a.viseme === c.viseme && b.viseme !== a.viseme && b.openness > 0.2 && b.viseme !== 'MBP')
        flicker++;
    }
    console.log(
      `timeline: ${open}/${poses.length} frames open, ${flicker} one-frame shape flickers`,
    );
    expect(flicker / poses.length).toBeLessThan(0.08);
  });

  it('tracker: open in vowels, nearly closed in closures and pauses', () => {
    let vowelSum = 0;
    let vowelN = 0;
    let closedSum = 0;
    let closedN = 0;
    for (let t = 5; t < durationMs; t += 10) {
      const p = phonemeAt(t);
      const unit = p ? ipaToVisemeUnits(p.ipa, p.stressed)[0] : undefined;
      const openness = tracker.poseAt(t).openness;
      if (unit?.isVowel && t - p!.startMs > 30) {
        vowelSum += openness;
        vowelN++;
      } else if (!p || unit?.viseme === 'MBP') {
        closedSum += openness;
        closedN++;
      }
    }
    const vowels = vowelSum / vowelN;
    const closed = closedSum / closedN;
    console.log(
      `tracker: mean openness ${vowels.toFixed(2)} in vowels, ${closed.toFixed(2)} in m/b/p and pauses`,
    );
    expect(vowels).toBeGreaterThan(0.4);
    expect(vowels).toBeGreaterThan(closed + 0.2);
  });

  it('tracker: shapes agree with the phonemes more often than chance', () => {
    let rounded = 0;
    let roundedAsRound = 0;
    let openV = 0;
    let openAsRound = 0;
    let hiss = 0;
    let hissAsHiss = 0;
    for (let t = 5; t < durationMs; t += 10) {
      const v = firstUnit(phonemeAt(t));
      const got = tracker.poseAt(t).viseme;
      const round = got === 'U' || got === 'O';
      if (v === 'U' || v === 'WQ') {
        rounded++;
        if (round) roundedAsRound++;
      } else if (v === 'AA' || v === 'E') {
        openV++;
        if (round) openAsRound++;
      } else if (v === 'CH') {
        hiss++;
        if (got === 'SZ' || got === 'CH') hissAsHiss++;
      }
    }
    console.log(
      `tracker: u/w heard as rounded ${roundedAsRound}/${rounded}, a/e heard as rounded ${openAsRound}/${openV}, sh/ch heard as hiss ${hissAsHiss}/${hiss}`,
    );
    expect(roundedAsRound / rounded).toBeGreaterThan(openAsRound / openV + 0.2);
    expect(hissAsHiss / hiss).toBeGreaterThan(0.5);
  });

  it('timeline and tracker agree on when the mouth is open', () => {
    const a = frames.map((t) => mouthPoseAt(timeline, t).openness);
    const b = frames.map((t) => tracker.poseAt(t).openness);
    const r = pearson(a, b);
    console.log(`openness correlation timeline vs tracker: ${r.toFixed(2)}`);
    expect(r).toBeGreaterThan(0.4);
  });

  it('what a viewer sees follows the sound: mouth opening in rendered frames vs the envelope', () => {
    // A session's tracker: with its default lead, fed as the speech player feeds it.
    const sound = new AudioMouthTracker();
    for (let i = 0; i < pcm.length; i += chunk)
      sound.push(pcm.subarray(i, i + chunk), meta.sampleRate);
    const drivers: [string, (t: number) => MouthPose][] = [
      ['phoneme shapes alone', (t) => mouthPoseAt(timeline, t)],
      [
        'the sound, with phoneme closures',
        (t) => speechMouth(sound.poseAt(t), mouthPoseAt(timeline, t)),
      ],
    ];
    // The audio's RMS per 40 ms frame.
    const envelope = frames.map((t) => {
      const a = Math.floor((t / 1000) * meta.sampleRate);
      const b = Math.min(pcm.length, Math.floor(((t + 40) / 1000) * meta.sampleRate));
      let e = 0;
      for (let i = a; i < b; i++) e += (pcm[i]! / 32768) ** 2;
      return Math.sqrt(e / Math.max(1, b - a));
    });
    const r: Record<string, number> = {};
    for (const [name, poseAt] of drivers) {
      const renderer = createFaceRenderer(AVATAR_CATALOGUE[0]!.avatarId, { seed: 7 });
      const opening = frames.map((t) =>
        measureMouthOpening(
          renderer.renderFrame({ timeMs: t, mouth: poseAt(t + 20), parked: false }),
          renderer.width,
          renderer.height,
          renderer.mouthRegion,
        ),
      );
      r[name] = pearson(envelope, opening);
      console.log(`rendered mouth opening vs envelope, ${name}: r = ${r[name]!.toFixed(2)}`);
    }
    // 0.78 while the jaw opened on a log scale of loudness, 0.85 in proportion to it.
    expect(r['the sound, with phoneme closures']).toBeGreaterThan(0.8);
    expect(r['the sound, with phoneme closures']).toBeGreaterThan(r['phoneme shapes alone']! + 0.1);
  });

  // The fixture above is what the tracker was tuned on; this is speech it was not: two other
  // texts in the three stock voices, synthesized now. Measured when the jaw went proportional to
  // loudness (and closed in 40 ms): r = 0.75 to 0.83 (0.58 to 0.71 on the old log scale); with
  // lip closures shown for their cores and wider rounded shapes, 0.79 to 0.84.
  it('what a viewer sees follows the sound on other texts and voices', async () => {
    const runtime = await espeakRuntime();
    const texts = [
      'Hello there! I am a talking photo. My mouth follows the words I say, and my eyes blink now and then, as yours do.',
      'The quick brown fox jumps over the lazy dog, while seven wizards quietly vex the jolly king. Shall we begin?',
    ];
    for (const avatar of AVATAR_CATALOGUE) {
      const profile = stockVoiceProfile(avatar.defaultVoice.voiceId)!;
      for (const text of texts) {
        const speech = synthesizeWithEspeak(runtime, text, profile.espeak);
        const r = renderedFollowsSound(speech.pcm, speech.sampleRate, speech.phonemes, avatar);
        console.log(`${avatar.defaultVoice.name}, "${text.slice(0, 20)}…": r = ${r.toFixed(2)}`);
        expect(r).toBeGreaterThan(0.7);
      }
    }
  });

  it('the lips close for m, b and p while the sound goes on', () => {
    const sound = new AudioMouthTracker({ leadMs: 0 });
    for (let i = 0; i < pcm.length; i += chunk)
      sound.push(pcm.subarray(i, i + chunk), meta.sampleRate);
    const closures = meta.phonemes.filter((p) => firstUnit(p) === 'MBP');
    expect(closures.length).toBeGreaterThan(2);
    for (const p of closures) {
      // The timeline closes the lips as the phoneme starts (a little before: coarticulation).
      const at = p.startMs;
      expect(sound.poseAt(at).viseme).not.toBe('MBP');
      expect(speechMouth(sound.poseAt(at), mouthPoseAt(timeline, at)).viseme).toBe('MBP');
    }
  });
});

/**
 * Pearson r of the mouth opening in rendered frames (40 ms apart, the session's tracker and
 * phoneme closures driving the mouth) against the audio's RMS in the same 40 ms.
 */
function renderedFollowsSound(
  pcm: Float32Array,
  sampleRate: number,
  phonemes: PhonemeTiming[],
  avatar: (typeof AVATAR_CATALOGUE)[number],
): number {
  const sound = new AudioMouthTracker();
  const chunk = Math.round(sampleRate / 10);
  for (let i = 0; i < pcm.length; i += chunk) sound.push(pcm.subarray(i, i + chunk), sampleRate);
  const timeline = visemeTimeline(phonemes);
  const renderer = createFaceRenderer(avatar.avatarId, { seed: 7 });
  const envelope: number[] = [];
  const opening: number[] = [];
  for (let t = 0; t < (pcm.length / sampleRate) * 1000; t += 40) {
    const a = Math.floor((t / 1000) * sampleRate);
    const b = Math.min(pcm.length, Math.floor(((t + 40) / 1000) * sampleRate));
    let e = 0;
    for (let i = a; i < b; i++) e += pcm[i]! ** 2;
    envelope.push(Math.sqrt(e / Math.max(1, b - a)));
    const mouth = speechMouth(sound.poseAt(t + 20), mouthPoseAt(timeline, t + 20));
    opening.push(
      measureMouthOpening(
        renderer.renderFrame({ timeMs: t, mouth, parked: false }),
        renderer.width,
        renderer.height,
        renderer.mouthRegion,
      ),
    );
  }
  return pearson(envelope, opening);
}

function pearson(a: number[], b: number[]): number {
  const mean = (x: number[]): number => x.reduce((s, v) => s + v, 0) / x.length;
  const ma = mean(a);
  const mb = mean(b);
  let cov = 0;
  let va = 0;
  let vb = 0;
  for (let i = 0; i < a.length; i++) {
    cov += (a[i]! - ma) * (b[i]! - mb);
    va += (a[i]! - ma) ** 2;
    vb += (b[i]! - mb) ** 2;
  }
  return cov / Math.sqrt(va * vb);
}
