// SPDX-License-Identifier: GPL-3.0-or-later
import { describe, expect, it } from 'vitest';
import { IdleMotion } from '../../../src/media/render/idleMotion.js';
import { BREATH_LEVELS, GAZES } from '../../../src/media/render/spriteAtlas.js';

const gazeName = (i: number): string => GAZES[i]?.name ?? '?';

function run(
  seed: number,
  ms: number,
  parked: boolean,
  speaking = false,
): { t: number; lid: number; gaze: string; breath: number }[] {
  const m = new IdleMotion(seed);
  const out = [];
  for (let t = 0; t <= ms; t += 20) {
    const s = m.update(t, parked, speaking && Math.floor(t / 300) % 3 !== 2);
    out.push({ t, lid: s.lid, gaze: gazeName(s.gaze), breath: s.breath });
  }
  return out;
}

describe('IdleMotion', () => {
  it('blinks at natural, irregular intervals', () => {
    const starts: number[] = [];
    let closed = false;
    for (const s of run(42, 60_000, false)) {
      if (s.lid > 0.9 && !closed) starts.push(s.t);
      closed = s.lid > 0.9;
    }
    const gaps = starts.slice(1).map((t, i) => t - starts[i]!);
    expect(starts.length).toBeGreaterThan(60_000 / 6000);
    expect(starts.length).toBeLessThan(60_000 / 1500);
    expect(Math.max(...gaps)).toBeLessThan(6000);
    expect(new Set(gaps).size).toBeGreaterThan(gaps.length / 2);
  });

  it('breathes within the drawn range, slower and shallower when parked', () => {
    const active = run(1, 20_000, false).map((s) => s.breath);
    const parked = run(1, 20_000, true)
      .slice(100)
      .map((s) => s.breath);
    expect(Math.min(...active)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...active)).toBeLessThanOrEqual(BREATH_LEVELS - 1);
    expect(Math.max(...active)).toBeGreaterThan(BREATH_LEVELS - 1.2);
    expect(Math.max(...parked)).toBeLessThan(Math.max(...active));
  });

  it('parks with lids half down and eyes lowered', () => {
    const parked = run(3, 10_000, true).slice(20);
    expect(parked.every((s) => s.lid >= 0.5)).toBe(true);
    expect(parked.every((s) => s.gaze === 'down')).toBe(true);
  });

  it('lifts the brows now and then while speaking, never when quiet', () => {
    const raisedWhileSpeaking = run(5, 20_000, false, true).filter((s) =>
      s.gaze.endsWith('-raised'),
    );
    const raisedQuiet = run(5, 20_000, false, false).filter((s) => s.gaze.endsWith('-raised'));
    expect(raisedWhileSpeaking.length).toBeGreaterThan(20);
    expect(raisedQuiet.length).toBe(0);
  });

  it('replays the same life for the same seed', () => {
    expect(run(9, 5000, false)).toEqual(run(9, 5000, false));
    expect(run(9, 5000, false)).not.toEqual(run(10, 5000, false));
  });
});
