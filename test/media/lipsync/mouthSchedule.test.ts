// SPDX-License-Identifier: GPL-3.0-or-later
import { describe, expect, it } from 'vitest';
import { MouthSchedule } from '../../../src/media/lipsync/mouthSchedule.js';
import { visemeTimeline } from '../../../src/media/lipsync/visemeTimeline.js';

// "ah ah": two open vowels, 0-400 ms of the utterance's own clock.
const utterance = visemeTimeline([
  { ipa: 'ˈɑː', startMs: 0, endMs: 180 },
  { ipa: 'ˈɑː', startMs: 220, endMs: 400 },
]);

describe('MouthSchedule', () => {
  it('plays each utterance at its playout start and rests in between', () => {
    const s = new MouthSchedule();
    s.place('u1', utterance, 1000);
    s.place('u2', utterance, 3000);
    expect(s.poseAt(500).openness).toBe(0);
    expect(s.poseAt(1100).viseme).toBe('AA');
    expect(s.poseAt(1100).openness).toBeGreaterThan(0.5);
    expect(s.poseAt(2000).openness).toBe(0);
    expect(s.poseAt(3100).openness).toBeGreaterThan(0.5);
  });

  it('closes quickly after a cut and drops later utterances', () => {
    const s = new MouthSchedule();
    s.place('u3', utterance, 1000);
    s.place('u4', utterance, 1500);
    s.cut(1100);
    expect(s.poseAt(1100).openness).toBeGreaterThan(0.5);
    expect(s.poseAt(1140).openness).toBeLessThan(s.poseAt(1100).openness * 0.5);
    expect(s.poseAt(1250).openness).toBe(0);
    expect(s.poseAt(1600).openness).toBe(0);
    expect(s.size).toBe(1);
  });

  it('forgets finished utterances on prune', () => {
    const s = new MouthSchedule();
    s.place('u5', utterance, 0);
    s.place('u6', utterance, 5000);
    s.prune(2000);
    expect(s.size).toBe(1);
    expect(s.poseAt(5100).openness).toBeGreaterThan(0.5);
  });
});

describe('MouthSchedule with timings that arrive in pieces', () => {
  it('replaces an utterance placed again, so its mouth glides across the pieces', () => {
    const s = new MouthSchedule();
    const firstPiece = visemeTimeline([{ ipa: 'ˈɑː', startMs: 0, endMs: 180 }]);
    s.place('u', firstPiece, 1000);
    // Only the first vowel is known yet: the mouth closes after it.
    expect(s.poseAt(1300).openness).toBeLessThan(0.2);
    s.place('u', utterance, 1000);
    expect(s.size).toBe(1);
    // The whole track: the mouth is open on the second vowel, at the same start.
    expect(s.poseAt(1300).openness).toBeGreaterThan(0.5);
    expect(s.poseAt(500).openness).toBe(0);
  });
});

describe('MouthSchedule over a long session', () => {
  it('forgets finished utterances as playout moves on', () => {
    const s = new MouthSchedule();
    for (let i = 0; i < 1000; i++) {
      s.place(`u${i}`, utterance, i * 1000);
      s.poseAt(i * 1000 + 100);
    }
    expect(s.size).toBeLessThan(10);
    expect(s.poseAt(999_100).openness).toBeGreaterThan(0.5);
  });
});
