import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildPhotoAvatar,
  decodePhotoBuild,
  photoWorkerPool,
} from '../../../src/media/photo/index.js';
import {
  i420ToRgb,
  renderStill,
  unpackAtlas,
  type AvatarAtlas,
} from '../../../src/media/render/index.js';
import {
  chinDropShare,
  describeFrame,
  describeImage,
  faceDistance,
  innerMouthBands,
  lumaOf,
  upperTeethHeight,
} from '../../support/faceQuality.js';
import { astronaut, faceApiSample } from '../../support/portraits.js';

/**
 * The mouth as a viewer sees it (issue 31, part 3), measured on each portrait's widest-open
 * frame (AA at full openness) by a face detector's landmarks and face recognition, as a viewer
 * would judge it: the face is still the photo's, the chin goes down, and under the upper lip
 * are the upper teeth with the dark of the mouth below them, whether the photo smiles with its
 * teeth or keeps its lips closed.
 */

/** A face of one of face-api's demo photos, cut out around its box (x, y, width, height). */
async function demoFace(
  sample: number,
  box: [number, number, number, number],
): Promise<Uint8Array> {
  const bytes = faceApiSample(sample);
  const { width = 0, height = 0 } = await sharp(bytes).metadata();
  const [x, y, w, h] = box;
  const left = Math.max(0, Math.round(x - 0.9 * w));
  const top = Math.max(0, Math.round(y - 0.7 * h));
  const right = Math.min(width, Math.round(x + 1.9 * w));
  const bottom = Math.min(height, Math.round(y + 1.9 * h));
  return new Uint8Array(
    await sharp(bytes)
      .extract({ left, top, width: right - left, height: bottom - top })
      .jpeg({ quality: 92 })
      .toBuffer(),
  );
}

const PORTRAITS: [string, () => Promise<Uint8Array>][] = [
  ['astronaut (smile, upper teeth)', () => Promise.resolve(astronaut())],
  ['sample6, right (smile, upper teeth)', () => demoFace(6, [681, 321, 160, 307])],
  ['sample3, right (smile, teeth, coloured light)', () => demoFace(3, [1514, 292, 170, 280])],
  ['sample6, left (lips closed)', () => demoFace(6, [250, 468, 210, 291])],
  ['sample3, middle (lips closed)', () => demoFace(3, [585, 329, 199, 271])],
];

/** The widest-open frame: AA (the widest jaw of every shape) at full openness. */
const WIDEST = { mouth: { viseme: 'AA', openness: 1 } } as const;

interface Figures {
  identity: number;
  chinDrop: number;
  top: number;
  middle: number;
  mouthHeight: number;
  /** Upper teeth under the upper lip, px: at rest and in the widest-open frame. */
  teethAtRest: number;
  teethOpen: number;
}

const figures = new Map<string, Figures>();

beforeAll(async () => {
  for (const [name, read] of PORTRAITS) {
    const source = await read();
    const output = await buildPhotoAvatar(source, { atlasId: `mouth-${figures.size}` });
    const atlas: AvatarAtlas = unpackAtlas(decodePhotoBuild(output.build, `mouth-${figures.size}`));
    const [photo] = await describeImage(source);
    const restFrame = renderStill(atlas);
    const [rest] = await describeFrame(restFrame);
    const openFrame = renderStill(atlas, WIDEST);
    const [open] = await describeFrame(openFrame);
    if (!photo || !rest || !open) throw new Error(`${name}: no face found in the photo or a frame`);
    const openLuma = lumaOf(i420ToRgb({ width: 512, height: 512, data: openFrame }));
    const restLuma = lumaOf(i420ToRgb({ width: 512, height: 512, data: restFrame }));
    const bands = innerMouthBands(openLuma, 512, open.landmarks);
    figures.set(name, {
      identity: faceDistance(photo.descriptor, open.descriptor),
      chinDrop: chinDropShare(rest.landmarks, open.landmarks),
      top: bands.top,
      middle: bands.middle,
      mouthHeight: bands.height,
      teethAtRest: upperTeethHeight(restLuma, 512, rest.landmarks),
      teethOpen: upperTeethHeight(openLuma, 512, open.landmarks),
    });
  }
  const table: Record<string, Record<string, string>> = {};
  for (const [name, f] of figures) {
    table[name] = {
      'identity, widest open (< 0.35)': f.identity.toFixed(3),
      'chin drop / nose-chin (>= 4 %)': `${(f.chinDrop * 100).toFixed(1)} %`,
      'inner mouth luma, top band': f.top.toFixed(0),
      'middle (top > middle)': f.middle.toFixed(0),
      'inner mouth height, px': f.mouthHeight.toFixed(1),
      'upper teeth, px: at rest / open': `${f.teethAtRest.toFixed(1)} / ${f.teethOpen.toFixed(1)}`,
    };
  }
  console.log('The mouth at its widest (AA, full openness), per portrait:');
  console.table(table);
}, 600_000);

afterAll(() => photoWorkerPool().close());

describe.each(PORTRAITS.map(([name]) => [name]))('the mouth wide open: %s', (name) => {
  const f = () => figures.get(name)!;

  it('is still the person of the photo (face-recognition distance under 0.35)', () => {
    expect(f().identity).toBeLessThan(0.35);
  });

  it('drops the chin by at least 4 % of the nose-to-chin height', () => {
    expect(f().chinDrop).toBeGreaterThanOrEqual(0.04);
  });

  it('shows the upper teeth under the upper lip and the dark of the mouth below them', () => {
    expect(f().top).toBeGreaterThan(f().middle);
    // The photo's own upper teeth stay under the upper lip: most of their height still shows.
    if (f().teethAtRest >= 2) expect(f().teethOpen).toBeGreaterThanOrEqual(0.7 * f().teethAtRest);
  });
});
