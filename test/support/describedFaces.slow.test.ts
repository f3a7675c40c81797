// SPDX-License-Identifier: GPL-3.0-or-later
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { describeImage } from './faceQuality.js';
import { astronaut } from './portraits.js';

const stored = () =>
  readdirSync(join(process.env.VISAGE_TEST_SCRATCH!, 'faces')).filter((f) => f.endsWith('.v8'));

describe('faces described once per run', () => {
  it('answers the same faces for the same pixels, each caller its own copy', async () => {
    const first = await describeImage(astronaut(), 0.2);
    expect(first.length).toBeGreaterThan(0);
    // Stored in the run's scratch folder for the other files.
    expect(stored().length).toBeGreaterThan(0);
    // The same pixels again (a fresh copy of the bytes): the same faces, typed arrays included.
    const again = await describeImage(new Uint8Array(astronaut()), 0.2);
    expect(again).toEqual(first);
    expect(again[0]!.alignedDescriptor).toBeInstanceOf(Float32Array);
    // A caller that sorts or changes what it got (measurePortrait sorts the photo's faces)
    // changes nobody else's answer.
    const asFound = structuredClone(first);
    first[0]!.landmarks[0]!.x = -1;
    again.reverse().push(again[0]!);
    expect(await describeImage(astronaut(), 0.2)).toEqual(asFound);
  }, 120_000);

  it('measures other pixels, or another confidence, again', async () => {
    const first = await describeImage(astronaut(), 0.2);
    const flipped = new Uint8Array(await sharp(astronaut()).flop().png().toBuffer());
    const mirrored = await describeImage(flipped, 0.2);
    expect(mirrored[0]!.box.x).not.toBeCloseTo(first[0]!.box.x, 0);
    const before = stored().length;
    await describeImage(astronaut(), 0.3);
    expect(stored().length).toBeGreaterThan(before);
  }, 120_000);
});
