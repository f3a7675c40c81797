// SPDX-License-Identifier: GPL-3.0-or-later
import sharp, { type Sharp } from 'sharp';
import { describe, expect, it } from 'vitest';
import { detectFaces } from '../../../src/media/photo/findFace.js';
import type { HeadPose } from '../../../src/media/photo/headPose.js';
import { ASTRONAUT_PATH } from '../../support/portraits.js';

/**
 * The head pose fitted to real landmarks (the astronaut portrait, through the detector) does
 * what a pose must: mirroring the picture negates yaw and roll and keeps pitch; scaling it
 * changes nothing; turning it in its plane changes roll by the turn and nothing else.
 */
async function poseOf(picture: Sharp): Promise<HeadPose> {
  const { data, info } = await picture.removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const faces = await detectFaces(new Uint8Array(data), info.width, info.height);
  const face = faces.find((f) => f.confirmation > 0.2);
  expect(face, 'a face').toBeTruthy();
  return face!.pose;
}

const show = (p: HeadPose) =>
  `yaw ${p.yawDeg.toFixed(1)}, pitch ${p.pitchDeg.toFixed(1)}, roll ${p.rollDeg.toFixed(1)}, misfit ${p.misfit.toFixed(3)}`;

describe('head pose', () => {
  it('is stable under mirroring, scale and turns in the picture plane', async () => {
    const base = await poseOf(sharp(ASTRONAUT_PATH));
    const mirrored = await poseOf(sharp(ASTRONAUT_PATH).flop());
    const larger = await poseOf(sharp(ASTRONAUT_PATH).resize(1400));
    const turned = await poseOf(
      sharp(await sharp(ASTRONAUT_PATH).rotate(12, { background: '#808080' }).png().toBuffer()),
    );
    console.log(
      `astronaut: ${show(base)}\nmirrored: ${show(mirrored)}\n1400 px: ${show(larger)}\nturned 12 degrees: ${show(turned)}`,
    );
    expect(Math.abs(base.yawDeg)).toBeLessThan(8);
    expect(Math.abs(base.pitchDeg)).toBeLessThan(10);
    expect(Math.abs(mirrored.yawDeg + base.yawDeg), 'yaw mirrored').toBeLessThan(3);
    expect(Math.abs(mirrored.rollDeg + base.rollDeg), 'roll mirrored').toBeLessThan(3);
    expect(Math.abs(mirrored.pitchDeg - base.pitchDeg), 'pitch mirrored').toBeLessThan(3);
    for (const key of ['yawDeg', 'pitchDeg', 'rollDeg'] as const) {
      expect(Math.abs(larger[key] - base[key]), `${key} at 1400 px`).toBeLessThan(3);
    }
    expect(turned.rollDeg - base.rollDeg).toBeGreaterThan(9);
    expect(turned.rollDeg - base.rollDeg).toBeLessThan(15);
    expect(Math.abs(turned.yawDeg - base.yawDeg)).toBeLessThan(4);
    expect(Math.abs(turned.pitchDeg - base.pitchDeg)).toBeLessThan(4);
  }, 120_000);
});
