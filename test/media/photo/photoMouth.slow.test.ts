// SPDX-License-Identifier: GPL-3.0-or-later
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { photoThreadPool } from '../../../src/media/photo/index.js';
import { i420ToRgb, renderStill } from '../../../src/media/render/index.js';
import { portraitAtlas } from '../../support/builtPortraits.js';
import { describeFrame, describeImage, faceDistance, lumaOf } from '../../support/faceQuality.js';
import { usablePortraits } from '../../support/portraitSet.js';
import { WIDEST, figuresRow, measurePortrait, mouthFailures } from './mouthFigures.js';

/**
 * The mouth as a viewer sees it (issue 31, part 3), on every usable portrait of the labelled
 * set, measured on its widest-open frame (AA at full openness) by a face detector's landmarks
 * and face recognition: the face is still the photo's (distance under 0.35), the chin goes down
 * (at least 4 % of the nose-to-chin height), and under the upper lip are the upper teeth with the
 * dark of the mouth below them (the inner mouth's top band brighter than its middle; the photo's
 * own upper teeth still showing at least 60 % of their height), whether the photo smiles with
 * its teeth or keeps its lips closed. See docs/photo-avatars.md.
 *
 * Identity is measured on faces aligned as the recognition net was trained on them (dlib's face
 * chips: turned, scaled and centred by their landmarks), against the photo as given. On face-api's
 * own descriptors (the detector's box as it stands) a tilted head, a grey border or a tighter crop
 * moved a photo 0.3 to 0.7 from itself with no rendering at all, as far as the goal allows the
 * open mouth to move it (faceQuality.ts, alignedChip; docs/photo-avatars.md). That figure is
 * printed beside it for the record.
 */

const failures = new Map<string, string[]>();
let names: string[] = [];

beforeAll(async () => {
  const portraits = await usablePortraits();
  names = portraits.map((p) => p.name);
  const table: Record<string, Record<string, string>> = {};
  for (const portrait of portraits) {
    try {
      const { figures } = await measurePortrait(portrait.bytes);
      failures.set(portrait.name, mouthFailures(figures));
      table[portrait.name] = figuresRow(figures);
    } catch (err) {
      failures.set(portrait.name, [`not measured: ${(err as Error).message}`]);
      table[portrait.name] = { 'identity (< 0.35)': (err as Error).message };
    }
    const missed = failures.get(portrait.name)!;
    table[portrait.name]!.goals = missed.length ? `missed: ${missed.join('; ')}` : 'met';
  }
  console.log('The mouth at its widest (AA, full openness), per usable portrait:');
  console.table(table);
}, 2_400_000);

afterAll(() => photoThreadPool().close());

describe('the mouth wide open, on every usable portrait', () => {
  it('keeps the person, drops the chin, and shows the upper teeth above the dark', () => {
    expect(names.length).toBeGreaterThan(0);
    const missed = names.flatMap((name) => failures.get(name)!.map((what) => `${name}: ${what}`));
    const met = names.filter((name) => failures.get(name)!.length === 0).length;
    console.log(`${met} of ${names.length} portraits meet every goal`);
    expect(missed).toEqual([]);
  });
});

describe('the identity figure itself', () => {
  // What the alignment is for, on the photos alone (no rendering): a face stays itself when its
  // picture gets a border or is turned upright (0.16 each, against 0.27 and 0.44 unaligned), and
  // two people stay apart.
  const portrait = async (name: string) => {
    const found = (await usablePortraits()).find((p) => p.name === name);
    if (!found) throw new Error(`no portrait named ${name}`);
    return found.bytes;
  };
  const face = async (bytes: Uint8Array) => {
    const [largest] = await describeImage(bytes, 0.2);
    if (!largest) throw new Error('no face found');
    return largest;
  };
  const grey = { r: 128, g: 128, b: 128 };

  it('keeps a face itself under a border and a turn, and keeps two people apart', async () => {
    const tipped = await portrait('Nicolas Cage, close-up, head tipped');
    const photo = await face(tipped);
    const bordered = await face(
      new Uint8Array(
        await sharp(tipped)
          .extend({ top: 60, bottom: 60, left: 60, right: 60, background: grey })
          .png()
          .toBuffer(),
      ),
    );
    const upright = await face(
      new Uint8Array(await sharp(tipped).rotate(-15.5, { background: grey }).png().toBuffer()),
    );
    const other = await face(await portrait('George Clooney, close-up'));
    const same = await face(await portrait('Nicolas Cage, head and shoulders'));
    const distances = {
      border: faceDistance(photo.alignedDescriptor, bordered.alignedDescriptor),
      upright: faceDistance(photo.alignedDescriptor, upright.alignedDescriptor),
      samePersonOtherPhoto: faceDistance(photo.alignedDescriptor, same.alignedDescriptor),
      otherPerson: faceDistance(photo.alignedDescriptor, other.alignedDescriptor),
      unalignedBorder: faceDistance(photo.descriptor, bordered.descriptor),
      unalignedUpright: faceDistance(photo.descriptor, upright.descriptor),
    };
    console.log(`Nicolas Cage's tipped close-up, distances: ${JSON.stringify(distances)}`);
    // Not nothing: a close-up's landmarks move a little with its framing, and its chip reaches
    // past the picture's edges. But well under the goal's 0.35, and under face-api's own.
    expect(distances.border).toBeLessThan(Math.min(0.2, distances.unalignedBorder));
    expect(distances.upright).toBeLessThan(Math.min(0.2, distances.unalignedUpright));
    expect(distances.samePersonOtherPhoto).toBeLessThan(0.6);
    expect(distances.otherPerson).toBeGreaterThan(0.6);
  }, 120_000);
});

describe('the inside of the mouth in a small photo', () => {
  // Drawn at the frame's resolution into a photo scaled up 2.3 times (Bill Murray's, 252 x 220),
  // the teeth met the dark in one pixel: a sticker's hard edge on a soft picture. It is softened
  // as much as the photo's own pixels are (mouthSprites.ts, interiorSoftness).
  it('is as soft as the photo: the teeth fade into the dark over pixels, not at one step', async () => {
    const bytes = (await usablePortraits()).find((p) => p.name === 'Bill Murray, moustache')!.bytes;
    const { atlas } = await portraitAtlas(bytes);
    const frame = renderStill(atlas, WIDEST);
    const [open] = await describeFrame(frame, 0.2);
    const luma = lumaOf(i420ToRgb({ width: 512, height: 512, data: frame }));
    // Down the middle of the mouth, from above the teeth to the dark below them.
    const x = Math.round(open!.landmarks[62]!.x);
    const from = Math.round(open!.landmarks[62]!.y) - 15;
    const to = Math.round(open!.landmarks[66]!.y) + 5;
    const column = Array.from({ length: to - from }, (_, k) => luma[(from + k) * 512 + x]!);
    const brightest = column.indexOf(Math.max(...column));
    const below = column.slice(brightest);
    const drop = below[0]! - Math.min(...below);
    let steepest = 0;
    for (let k = 1; k < below.length; k++) steepest = Math.max(steepest, below[k - 1]! - below[k]!);
    console.log(
      `Bill Murray, the teeth into the dark: ${drop.toFixed(0)} luma, at most ${steepest.toFixed(0)} in one pixel (${column.map((v) => v.toFixed(0)).join(' ')})`,
    );
    expect(drop).toBeGreaterThan(60);
    expect(steepest).toBeLessThan(0.5 * drop);
  }, 120_000);
});
