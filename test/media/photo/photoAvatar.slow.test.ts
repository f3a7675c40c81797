// SPDX-License-Identifier: GPL-3.0-or-later
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Viseme } from '../../../src/media/lipsync/viseme.js';
import {
  photoBuildFraming,
  photoThreadPool,
  type PhotoBuildOutput,
} from '../../../src/media/photo/index.js';
import {
  createAtlasFaceRenderer,
  i420ToRgb,
  measureMouthOpening,
  renderStill,
  type AvatarAtlas,
} from '../../../src/media/render/index.js';
import {
  describeFrame,
  describeImage,
  faceDistance,
  lumaOf,
  maskedSsim,
} from '../../support/faceQuality.js';
import { portraitAtlas } from '../../support/builtPortraits.js';
import { astronaut, faceApiSample } from '../../support/portraits.js';

/**
 * Photo avatars on real photos: the quality figures of issue 11 (identity kept, nothing but the
 * face's moving parts moves, the mouth opens measurably) and the renderer's behaviour on a
 * photo atlas. Printed, and asserted against their goals.
 */
const PHOTOS: [string, () => Uint8Array | Promise<Uint8Array>][] = [
  ['astronaut (NASA portrait)', astronaut],
  // One woman cut out of a group photo (the whole photo is refused: multiple_faces).
  ['face-api sample6, its largest face cut out', () => sampleCrop(6, 1268, 118, 651)],
];

/** A square cut out of one of face-api's group photos, as a JPEG. */
async function sampleCrop(n: number, left: number, top: number, size: number): Promise<Uint8Array> {
  const cut = sharp(faceApiSample(n)).extract({ left, top, width: size, height: size });
  return new Uint8Array(await cut.jpeg({ quality: 92 }).toBuffer());
}

interface Built {
  source: Uint8Array;
  output: PhotoBuildOutput;
  atlas: AvatarAtlas;
}

const built = new Map<string, Built>();

beforeAll(async () => {
  for (const [name, read] of PHOTOS) {
    const source = await read();
    // Built once per run (test/support/builtPortraits.ts): the astronaut is in every photo file;
    // the timings printed are those of the file that built it.
    const { output, atlas } = await portraitAtlas(source);
    built.set(name, { source, output, atlas });
    const total = Object.entries(output.timings)
      .filter(([k]) => !k.startsWith('build_'))
      .reduce((n, [, ms]) => n + ms, 0);
    console.log(
      `${name}: ${output.width}x${output.height} built in ${total} ms (${JSON.stringify(output.timings)}), atlas ${(atlas.bytes / 1e6).toFixed(1)} MB`,
    );
  }
}, 120_000);

afterAll(() => photoThreadPool().close());

/** The photo cropped to the avatar's frame, straight from the original (sharp), as luma. */
async function croppedPhotoLuma(b: Built): Promise<Float32Array> {
  const f = photoBuildFraming(b.output.build);
  const k = 512 / f.size;
  const { data } = await sharp(b.source)
    .removeAlpha()
    .resize(Math.round(b.output.width * k), Math.round(b.output.height * k), { kernel: 'lanczos3' })
    .extract({ left: Math.round(f.x * k), top: Math.round(f.y * k), width: 512, height: 512 })
    .raw()
    .toBuffer({ resolveWithObject: true });
  return lumaOf(new Uint8Array(data));
}

const frameLuma = (i420: Uint8Array) => lumaOf(i420ToRgb({ width: 512, height: 512, data: i420 }));

describe.each(PHOTOS.map(([name]) => [name]))('photo avatar: %s', (name) => {
  const b = () => built.get(name)!;

  it('keeps the identity: face-recognition distance to the photo, neutral and mouth wide open', async () => {
    const [source] = await describeImage(b().source);
    expect(source).toBeTruthy();
    const frames: [string, Uint8Array][] = [
      ['neutral', renderStill(b().atlas)],
      ['mouth wide open (AA)', renderStill(b().atlas, { mouth: { viseme: 'AA', openness: 1 } })],
    ];
    for (const [what, frame] of frames) {
      const [face] = await describeFrame(frame);
      expect(face, `a face in the ${what} frame`).toBeTruthy();
      const distance = faceDistance(source!.alignedDescriptor, face!.alignedDescriptor);
      console.log(
        `${name}: identity distance, ${what}: ${distance.toFixed(3)} (goal < 0.35, same person < 0.6)`,
      );
      expect(distance).toBeLessThan(0.35);
    }
    // For the record: the rounded shapes change the mouth most.
    for (const viseme of ['O', 'U', 'E'] as const) {
      const [face] = await describeFrame(
        renderStill(b().atlas, { mouth: { viseme, openness: 1 } }),
      );
      if (!face) continue;
      const distance = faceDistance(source!.alignedDescriptor, face.alignedDescriptor);
      console.log(`${name}: identity distance, ${viseme} (for the record): ${distance.toFixed(3)}`);
    }
  }, 120_000); // five detections and descriptors: 37 s at load 10, past the 30 s default

  it('moves nothing else: SSIM against the cropped photo outside the lower face and the eyes', async () => {
    const photo = await croppedPhotoLuma(b());
    const { atlas } = b();
    const outside = [atlas.eyes.rect, atlas.mouths.rect];
    const frames: [string, Uint8Array][] = [
      ['neutral', renderStill(atlas)],
      ['mouth wide open', renderStill(atlas, { mouth: { viseme: 'AA', openness: 1 } })],
      ['blink', renderStill(atlas, { lid: 1 })],
    ];
    for (const [what, frame] of frames) {
      const ssim = maskedSsim(frameLuma(frame), photo, 512, 512, outside);
      console.log(
        `${name}: SSIM outside lower face and eyes, ${what}: ${ssim.toFixed(4)} (goal >= 0.95)`,
      );
      expect(ssim).toBeGreaterThanOrEqual(0.95);
    }
  });

  it('opens its mouth measurably with openness, shuts it for m/b/p, and blinks', () => {
    const { atlas } = b();
    const measure = (viseme: Viseme, openness: number) =>
      measureMouthOpening(
        renderStill(atlas, { mouth: { viseme, openness } }),
        512,
        512,
        atlas.mouthRegion,
      );
    const rest = measure('rest', 0);
    const half = measure('AA', 0.6);
    const full = measure('AA', 1);
    console.log(
      `${name}: mouth opening (dark share of the mouth region): rest ${rest.toFixed(3)}, AA 0.6 ${half.toFixed(3)}, AA 1 ${full.toFixed(3)}, MBP ${measure('MBP', 1).toFixed(3)}`,
    );
    expect(half).toBeGreaterThan(rest + 0.02);
    expect(full).toBeGreaterThan(half + 0.02);
    expect(measure('MBP', 1)).toBeLessThan(rest + 0.01);
    // Every viseme has its own look at full openness.
    const shapes = (['AA', 'E', 'I', 'O', 'U', 'FV', 'TH', 'WQ'] as const).map((v) =>
      renderStill(atlas, { mouth: { viseme: v, openness: 1 } }),
    );
    for (let i = 0; i < shapes.length; i++) {
      for (let j = i + 1; j < shapes.length; j++) {
        expect(meanAbsDiff(shapes[i]!, shapes[j]!, atlas.mouthRegion)).toBeGreaterThan(0.5);
      }
    }
    // A closed lid covers the eye: the eye region changes, and more with the lid further down.
    const open = renderStill(atlas);
    expect(meanAbsDiff(open, renderStill(atlas, { lid: 1 }), atlas.eyes.rect)).toBeGreaterThan(
      meanAbsDiff(open, renderStill(atlas, { lid: 0.4 }), atlas.eyes.rect),
    );
  });

  it('renders with the same renderer as the stock faces: never a frozen frame, well under a millisecond', () => {
    const r = createAtlasFaceRenderer(b().atlas, { seed: 3 });
    let prev = r
      .renderFrame({ timeMs: 0, mouth: { viseme: 'rest', openness: 0 }, parked: false })
      .slice();
    for (let t = 40; t <= 8000; t += 40) {
      const frame = r.renderFrame({
        timeMs: t,
        mouth: { viseme: 'rest', openness: 0 },
        parked: false,
      });
      expect(Buffer.compare(Buffer.from(frame), Buffer.from(prev))).not.toBe(0);
      prev = frame.slice();
    }
    const visemes: Viseme[] = ['AA', 'E', 'O', 'MBP', 'rest', 'SZ'];
    const n = 2000;
    const started = performance.now();
    for (let i = 0; i < n; i++) {
      r.renderFrame({
        timeMs: 8000 + i * 40,
        mouth: { viseme: visemes[i % visemes.length]!, openness: (i % 7) / 6 },
        parked: i % 500 > 400,
      });
    }
    const ms = (performance.now() - started) / n;
    console.log(`${name}: ${ms.toFixed(3)} ms per frame (mean of ${n})`);
    expect(ms).toBeGreaterThan(0);
  }, 120_000);
});

function meanAbsDiff(
  a: Uint8Array,
  b: Uint8Array,
  r: { x: number; y: number; width: number; height: number },
): number {
  let sum = 0;
  for (let y = r.y; y < r.y + r.height; y++) {
    for (let x = r.x; x < r.x + r.width; x++) sum += Math.abs(a[y * 512 + x]! - b[y * 512 + x]!);
  }
  return sum / (r.width * r.height);
}
