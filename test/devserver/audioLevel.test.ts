// SPDX-License-Identifier: GPL-3.0-or-later
import { describe, expect, it } from 'vitest';
import { AudioLevelMeter } from '../../src/devserver/sfu/audioLevel.js';

describe('AudioLevelMeter', () => {
  it('reports speech when enough recent packets are loud, and silence otherwise', () => {
    const meter = new AudioLevelMeter();
    const t0 = 1_000_000;
    for (let i = 0; i < 25; i++) meter.add(i % 2 === 0 ? 10 : 127, t0 + i * 20); // half loud
    expect(meter.level(t0 + 500)).toBeCloseTo(10 ** (-10 / 20), 5);
    const quiet = new AudioLevelMeter();
    for (let i = 0; i < 25; i++) quiet.add(i % 4 === 0 ? 10 : 127, t0 + i * 20); // a quarter loud
    expect(quiet.level(t0 + 500)).toBe(0);
    // Half a second later the window is empty: nothing is heard any more.
    expect(meter.level(t0 + 1_200)).toBe(0);
  });
});
