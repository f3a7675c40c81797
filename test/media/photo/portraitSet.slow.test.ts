// SPDX-License-Identifier: GPL-3.0-or-later
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findStockVoice } from '../../../src/media/avatarCatalogue.js';
import { fittingStockVoice, PhotoError } from '../../../src/media/photo/index.js';
import { checkPictureSize, chooseFace, type FoundFace } from '../../../src/media/photo/findFace.js';
import { DETECTION_SIDE } from '../../../src/media/photo/photoBuild.js';
import { decodeFitted, probePhoto } from '../../../src/media/photo/photoImage.js';
import { photoThreadPool } from '../../../src/media/photo/photoThreadPool.js';
import {
  forTheRecord,
  refusals,
  usablePortraits,
  type LabelledPicture,
} from '../../support/portraitSet.js';

/**
 * Issue 31, part 2: the labelled portrait set through the build's own detection (the photo
 * worker) and choice of face. Prints, per picture, the pose of the face it chose (or of the
 * largest box, for a refusal) and the verdict; every usable portrait is accepted, every
 * other picture refused with its code.
 */
interface Verdict {
  code: string;
  message: string;
  face?: FoundFace;
}

const verdicts = new Map<string, Verdict>();
let usable: LabelledPicture[] = [];
let refused: Awaited<ReturnType<typeof refusals>> = [];
let judgementCalls: LabelledPicture[] = [];

async function judge(bytes: Uint8Array): Promise<Verdict> {
  const source = await probePhoto(bytes);
  const picture = await decodeFitted(source, DETECTION_SIDE);
  const faces = await photoThreadPool().detect(picture.data, picture.width, picture.height);
  try {
    checkPictureSize(source.width, source.height);
    const face = chooseFace(faces, source.width / picture.width);
    return { code: 'accepted', message: '', face };
  } catch (err) {
    if (!(err instanceof PhotoError)) throw err;
    return { code: err.code, message: err.message, face: faces[0] };
  }
}

function row(name: string, heldOut: boolean, expected: string, v: Verdict): string {
  const p = v.face?.pose;
  const angles = p
    ? `yaw ${p.yawDeg.toFixed(0).padStart(4)} pitch ${p.pitchDeg.toFixed(0).padStart(4)} roll ${p.rollDeg.toFixed(0).padStart(4)} misfit ${p.misfit.toFixed(3)} second detector ${v.face!.confirmation.toFixed(2)}`
    : 'no face-like box';
  const mark = expected === 'either' ? '-- ' : v.code === expected ? 'ok ' : 'BAD';
  return `${mark} ${heldOut ? '[held out] ' : ''}${name}: ${v.code} (expected ${expected}); ${angles}`;
}

beforeAll(async () => {
  usable = await usablePortraits();
  refused = await refusals();
  judgementCalls = await forTheRecord();
  for (const p of [...usable, ...refused, ...judgementCalls]) {
    verdicts.set(p.name, await judge(p.bytes));
  }
  const lines = [
    ...usable.map((p) => row(p.name, p.heldOut, 'accepted', verdicts.get(p.name)!)),
    ...refused.map((p) => row(p.name, p.heldOut, p.code, verdicts.get(p.name)!)),
    ...judgementCalls.map((p) => row(p.name, false, 'either', verdicts.get(p.name)!)),
  ];
  console.log(
    `labelled portrait set, ${lines.length} pictures (-- marks a judgement call, not asserted):\n${lines.join('\n')}`,
  );
}, 600_000);

afterAll(() => photoThreadPool().close());

describe('the labelled portrait set', () => {
  it('accepts every usable portrait (real people looking at the camera)', () => {
    const wrong = usable.filter((p) => verdicts.get(p.name)!.code !== 'accepted');
    expect(
      wrong.map((p) => `${p.name}: ${verdicts.get(p.name)!.message}`),
      'usable portraits refused',
    ).toEqual([]);
    expect(usable.length).toBeGreaterThanOrEqual(30);
  });

  it('refuses every other picture with the code that says why', () => {
    const wrong = refused.filter((p) => verdicts.get(p.name)!.code !== p.code);
    expect(
      wrong.map((p) => `${p.name}: ${verdicts.get(p.name)!.code}, expected ${p.code}`),
      'pictures judged wrongly',
    ).toEqual([]);
    expect(refused.filter((p) => p.code === 'no_face_found').length).toBeGreaterThanOrEqual(7);
  });

  it('says which way a refused head is turned', () => {
    for (const p of refused.filter((r) => r.code === 'face_not_frontal')) {
      expect(verdicts.get(p.name)!.message).toMatch(/turned|tipped|tilted/);
    }
  });

  it('estimates the same pose for the astronaut at every size (mirrored and rotated by 4 degrees)', () => {
    const poses = usable
      .filter((p) => p.name.startsWith('astronaut mirrored'))
      .map((p) => verdicts.get(p.name)!.face!.pose);
    expect(poses).toHaveLength(3);
    for (const pose of poses) {
      expect(Math.abs(pose.yawDeg)).toBeLessThan(8);
      expect(Math.abs(pose.pitchDeg)).toBeLessThan(8);
    }
    const rolls = poses.map((p) => p.rollDeg);
    expect(Math.max(...rolls) - Math.min(...rolls)).toBeLessThan(3);
  });
});

/**
 * Issue 43: a photo avatar made without a voice speaks with the stock voice of its face's
 * apparent register, chosen by the build from the same detection as above (the age and gender
 * net on the face it animates). Men get a male stock voice, women a female one.
 */
describe('the voice that fits the face', () => {
  it('gives every labelled man a male stock voice and every woman a female one', () => {
    const labelled = usable.filter((p) => p.speaker !== undefined);
    const rows = labelled.map((p) => {
      const face = verdicts.get(p.name)!.face!;
      const voice = fittingStockVoice(face.maleProbability);
      const speaker = findStockVoice(voice.voiceId)!.speaker;
      const right = speaker === (p.speaker === 'man' ? 'male' : 'female');
      return { p, voice, speaker, right };
    });
    const others = judgementCalls.flatMap((p) => {
      const face = verdicts.get(p.name)?.face;
      return face ? [{ p, voice: fittingStockVoice(face.maleProbability) }] : [];
    });
    const men = rows.filter((r) => r.p.speaker === 'man');
    const women = rows.filter((r) => r.p.speaker === 'woman');
    const share = (rs: typeof rows) => rs.filter((r) => r.right).length / rs.length;
    const percent = (x: number) => `${(100 * x).toFixed(0)} %`;
    console.log(
      [
        `voice register on the labelled set: ${rows.filter((r) => r.right).length}/${rows.length} right (${percent(share(rows))}); men ${percent(share(men))} of ${men.length}, women ${percent(share(women))} of ${women.length}`,
        ...rows.map(
          (r) =>
            `${r.right ? 'ok ' : 'BAD'} ${r.p.name} (${r.p.speaker}): P(man) ${r.voice.maleProbability.toFixed(3)}, ${r.voice.register}, ${findStockVoice(r.voice.voiceId)!.name} (${r.speaker})`,
        ),
        ...others.map(
          (o) =>
            `--  ${o.p.name}: P(man) ${o.voice.maleProbability.toFixed(3)}, ${o.voice.register}, ${findStockVoice(o.voice.voiceId)!.name}`,
        ),
      ].join('\n'),
    );
    // Both registers are in the set: a choice that were always Ada's (or always one voice) fails.
    expect(men.length).toBeGreaterThanOrEqual(10);
    expect(women.length).toBeGreaterThanOrEqual(10);
    expect(
      rows.filter((r) => !r.right).map((r) => `${r.p.name}: ${r.voice.register}`),
      'portraits given a voice of the other register',
    ).toEqual([]);
    // None of them sits in the unsure band: the estimates are clear on real portraits.
    expect(rows.filter((r) => r.voice.register === 'unsure').map((r) => r.p.name)).toEqual([]);
  });
});
