// SPDX-License-Identifier: GPL-3.0-or-later
import { describe, expect, it } from 'vitest';
import { Curve } from '../../../src/media/photo/curve.js';
import { luma, type Colour, type FaceColours } from '../../../src/media/photo/faceColours.js';
import { FaceFrame } from '../../../src/media/photo/landmarks.js';
import type { MouthShapeAtRest } from '../../../src/media/photo/photoFace.js';
import { measurePhotoTeeth } from '../../../src/media/photo/photoTeeth.js';
import { floatPicture } from '../../../src/media/photo/warp.js';

/**
 * Where the photo's upper teeth end (`bottom`: where an open mouth parts, mouthMotion.ts), on a
 * drawn mouth: skin, lips, upper teeth from the upper lip's inner edge (v = -4) to v = 1, then a
 * blur over 4 px into what lies below them (v = 5), then that down to the lower lip (v = 8).
 * Face coordinates are the picture's, shifted: u = x - 60, v = y - 40.
 */
const WIDTH = 120;
const HEIGHT = 80;
const SKIN: Colour = [200, 150, 130];
const LIPS: Colour = [170, 90, 90];
const TEETH: Colour = [235, 230, 215];
const DARK: Colour = [30, 15, 15];

const line = (v: number, bow = 0) =>
  new Curve([-30, -15, 0, 15, 30].map((u) => ({ u, v: v + bow * (1 - (u / 30) ** 2) })));

const mouth: MouthShapeAtRest = {
  frame: new FaceFrame({ x: 60, y: 40 }, 0),
  halfWidth: 30,
  upperOuter: line(-9, -1),
  lowerOuter: line(12, 2),
  upperInner: line(-4),
  lowerInner: line(8),
  innerMin: -26,
  innerMax: 26,
  jaw: [],
  noseBase: -30,
};

const colours: FaceColours = {
  lips: LIPS,
  lipsSeen: LIPS,
  sclera: [230, 230, 225],
  pupil: [20, 20, 20],
  lightLeft: luma(...SKIN),
  lightRight: luma(...SKIN),
  highlight: 190,
};

/** The mouth with `below` between the teeth's blur and the lower lip. */
function drawnMouth(below: Colour) {
  const canvas = floatPicture(WIDTH, HEIGHT);
  const mix = (a: Colour, b: Colour, t: number): Colour => [
    a[0] + (b[0] - a[0]) * t,
    a[1] + (b[1] - a[1]) * t,
    a[2] + (b[2] - a[2]) * t,
  ];
  for (let y = 0; y < HEIGHT; y++) {
    for (let x = 0; x < WIDTH; x++) {
      const u = x + 0.5 - 60;
      const v = y + 0.5 - 40;
      let c = SKIN;
      if (Math.abs(u) < 30 && v > mouth.upperOuter.at(u) && v < mouth.lowerOuter.at(u)) {
        c = LIPS;
        if (Math.abs(u) < 26 && v > -4 && v < 8) {
          c = v < 1 ? TEETH : v < 5 ? mix(TEETH, below, (v - 1) / 4) : below;
        }
      }
      canvas.data.set(c, (y * WIDTH + x) * 3);
    }
  }
  return canvas;
}

describe('the photo teeth’s lower edge', () => {
  it('lies where the teeth have faded into the mouth’s dark below them', () => {
    const teeth = measurePhotoTeeth(drawnMouth(DARK), 0, mouth, colours);
    expect(teeth.shown).toBe(true);
    expect(teeth.bottomOverDark).toBe(true);
    // Luma 230 to 20 over v = 1 to 5: nearer the dark than the lips' luma (about 114) from
    // v = 4.2. An edge where the teeth are still 40 % bright (v = 2.3) left their blur to go down
    // with the jaw, a light band under the new opening's dark.
    for (const u of [-15, 0, 15]) {
      expect(teeth.bottom.at(u)).toBeGreaterThan(3.5);
      expect(teeth.bottom.at(u)).toBeLessThan(5.5);
    }
  });

  it('stays at the edge of their light where they rest on the lower lip', () => {
    // No dark below (a smile's teeth on the lower lip): the lip's top must not be taken for teeth.
    const teeth = measurePhotoTeeth(drawnMouth(LIPS), 0, mouth, colours);
    expect(teeth.shown).toBe(true);
    expect(teeth.bottomOverDark).toBe(false);
    for (const u of [-15, 0, 15]) {
      expect(teeth.bottom.at(u)).toBeGreaterThan(1);
      expect(teeth.bottom.at(u)).toBeLessThan(3.5);
    }
  });
});
