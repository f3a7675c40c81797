// SPDX-License-Identifier: GPL-3.0-or-later
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { photoThreadPool } from '../../../src/media/photo/index.js';
import {
  rangeOf,
  rangeRow,
  realMouths,
  upCloseFailures,
  upCloseRow,
  type RealMouth,
  type UpCloseRange,
} from '../../support/mouthUpClose.js';
import { openMouthedPortraits, usablePortraits } from '../../support/portraitSet.js';
import { measurePortrait } from './mouthFigures.js';

/**
 * The mouth up close (issue 43, item 2: a mouth made of photographs). On the widest-open frame
 * (AA at full openness) of portraits whose mouths are drawn open (closed lips, a smile with
 * teeth, a smooth photo scaled up, dark skin), the inside of the mouth must look photographed,
 * not painted, by three figures measured between the lip landmarks a face detector places on the
 * frame (test/support/mouthUpClose.ts): the share of flat pixels inside the inner lips (3x3 luma
 * std under 1.2), the steepest luma step across the inner lip contour over that across the outer,
 * and the saturation of the inside's darkest half; and two of the dark's own (issue 43, the
 * cavity up close: Walter White's close-up met the three while reading at 3x as a flat near-black
 * pool with a firm outline): the width of the rim between the dark and what surrounds it over
 * the width of the lips' own outer edge, and the share of the dark within a tenth of its depth of
 * its floor (a flat pool: the dark of a real mouth is darkest deep and lighter towards the lips
 * and the teeth). Each is held to the range of the same figure on the REAL open mouths of the
 * portrait set (photographed mid-word, laughing, smiling with teeth), measured as a viewer would
 * see them: no flatter, sharper-edged, more saturated, narrower-rimmed or more of a pool than the
 * real ones' ends. How warm the dark is against the lips is printed beside the real range, not
 * held (test/support/mouthUpClose.ts, `warmth`). The range is printed beside the figures. See docs/photo-avatars.md.
 */

/** Portraits whose open mouth is drawn: closed lips, toothy smiles, a smooth photo, dark skin. */
const DRAWN = [
  'astronaut',
  'Audrey Hepburn, close-up',
  'Bill Murray, moustache',
  'Chuck Norris, beard, smile with teeth',
  'Kim Kardashian, close-up',
  'Sean Connery, tuxedo',
  'face-api sample6: woman, frontal, smiling',
  // A soft photo at or above the frame's resolution: its drawn edge was kept sharp (inner / outer
  // steepest step 4.06 before SOFT_LIPS in buildPhotoAtlas.ts).
  'face-api sample3: woman, smiling, head turned a little',
  // Dim photos: synthesized teeth at luma 170 or more (MIN_TEETH_LUMA in photoTeeth.ts) against
  // a near-black cavity, in faces whose skin is at 40 to 60 (inner / outer steepest step 4.53
  // and 5.35 before the teeth took the face's light).
  'Walter White, glasses, close-up',
  'face-api sample5: woman, dark, smiling',
];

let real: RealMouth[] = [];
let range: UpCloseRange;
const rendered = new Map<string, string[]>();

beforeAll(async () => {
  real = await realMouths(await openMouthedPortraits());
  range = rangeOf(real.map((m) => m.figures));
  const table: Record<string, Record<string, string>> = {};
  for (const m of real) table[`real: ${m.name}`] = upCloseRow(m.figures);
  table['REAL RANGE'] = rangeRow(range);
  const portraits = (await usablePortraits()).filter((p) => DRAWN.includes(p.name));
  for (const p of portraits) {
    const { figures } = await measurePortrait(p.bytes);
    const missed = upCloseFailures(figures.upClose, range);
    rendered.set(p.name, missed);
    table[`rendered: ${p.name}`] = {
      ...upCloseRow(figures.upClose),
      goals: missed.length ? `missed: ${missed.join('; ')}` : 'met',
    };
  }
  console.log('The mouth up close, widest-open frame, against real open mouths:');
  console.table(table);
}, 1_200_000);

afterAll(() => photoThreadPool().close());

describe('the inside of the mouth, up close', () => {
  it('is measured on enough real open mouths', () => {
    expect(real.length).toBeGreaterThanOrEqual(5);
  });

  it('is no flatter, no sharper-edged and no more saturated than real open mouths', () => {
    expect([...rendered.keys()].sort()).toEqual([...DRAWN].sort());
    const missed = [...rendered].flatMap(([name, m]) => m.map((what) => `${name}: ${what}`));
    expect(missed).toEqual([]);
  });
});
