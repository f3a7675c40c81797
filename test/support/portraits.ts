// SPDX-License-Identifier: GPL-3.0-or-later
// Pictures for the photo avatar tests: the astronaut portrait (test/fixtures/portraits), the
// group photos that ship in @vladmandic/face-api's package, and bad inputs made from them.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import sharp from 'sharp';

const require = createRequire(import.meta.url);

export const ASTRONAUT_PATH = 'test/fixtures/portraits/astronaut.png';

export function astronaut(): Uint8Array {
  return new Uint8Array(readFileSync(ASTRONAUT_PATH));
}

/** One of face-api's demo photos (1920 px group photos; sample6 has four faces). */
export function faceApiSample(n: number): Uint8Array {
  const dir = join(dirname(require.resolve('@vladmandic/face-api/package.json')), 'demo');
  return new Uint8Array(readFileSync(join(dir, `sample${n}.jpg`)));
}

const bytes = (b: Buffer) => new Uint8Array(b);

export async function astronautJpeg(): Promise<Uint8Array> {
  return bytes(await sharp(ASTRONAUT_PATH).jpeg({ quality: 90 }).toBuffer());
}

export async function astronautWebp(): Promise<Uint8Array> {
  return bytes(await sharp(ASTRONAUT_PATH).webp({ quality: 90 }).toBuffer());
}

/** The portrait so small that its face is about 45 px across. */
export async function tinyFace(): Promise<Uint8Array> {
  return bytes(await sharp(ASTRONAUT_PATH).resize(240).png().toBuffer());
}

/** A head-and-shoulders crop of the portrait, 64 px wide (its face about 28 px across). */
export async function smallPortrait(): Promise<Uint8Array> {
  return bytes(
    await sharp(ASTRONAUT_PATH)
      .extract({ left: 128, top: 40, width: 256, height: 300 })
      .resize(64)
      .png()
      .toBuffer(),
  );
}

/** smallPortrait in the middle of a grey picture 400 px wide (large enough to hold a face). */
export async function smallPortraitOnCanvas(): Promise<Uint8Array> {
  const small = await smallPortrait();
  return bytes(
    await sharp({ create: { width: 400, height: 300, channels: 3, background: '#8a8a8a' } })
      .composite([{ input: Buffer.from(small), left: 168, top: 112 }])
      .png()
      .toBuffer(),
  );
}

/**
 * The portrait beside its mirror image (two faces of the same size, side by side), or, with
 * `share` under 1, beside a copy `share` as large, at the top (a face further behind).
 */
export async function twoFaces(share = 1): Promise<Uint8Array> {
  const side = Math.round(512 * share);
  const other = await sharp(ASTRONAUT_PATH).flop().resize(side).png().toBuffer();
  return bytes(
    await sharp({ create: { width: 512 + side, height: 512, channels: 3, background: '#808080' } })
      .composite([
        { input: ASTRONAUT_PATH, left: 0, top: 0 },
        { input: other, left: 512, top: 0 },
      ])
      .png()
      .toBuffer(),
  );
}

/** The portrait turned in the picture's plane (a tilted head), the corners `background`. */
export async function tilted(degrees: number, background = '#808080'): Promise<Uint8Array> {
  return bytes(await sharp(ASTRONAUT_PATH).rotate(degrees, { background }).png().toBuffer());
}

/** A woman from face-api's sample2, her head turned to the side, near profile (alone in the crop). */
export async function turnedHead(): Promise<Uint8Array> {
  return bytes(
    await sharp(faceApiSample(2))
      .extract({ left: 153, top: 0, width: 570, height: 570 })
      .jpeg({ quality: 92 })
      .toBuffer(),
  );
}

/** Noise: no face anywhere. */
export async function noFace(): Promise<Uint8Array> {
  return bytes(
    await sharp({
      create: {
        width: 640,
        height: 480,
        channels: 3,
        background: '#6a8caf',
        noise: { type: 'gaussian', mean: 120, sigma: 40 },
      },
    })
      .blur(3)
      .png()
      .toBuffer(),
  );
}

export async function gif(): Promise<Uint8Array> {
  return bytes(await sharp(ASTRONAUT_PATH).resize(64).gif().toBuffer());
}

/** A valid PNG header declaring 8000 x 5100 pixels (40.8 megapixels), one flat colour. */
export async function hugePng(): Promise<Uint8Array> {
  return bytes(
    await sharp({ create: { width: 8000, height: 5100, channels: 3, background: '#777' } })
      .png({ compressionLevel: 9 })
      .toBuffer(),
  );
}

/** The first `share` of a file, as an interrupted upload leaves it. */
export function truncated(file: Uint8Array, share = 0.6): Uint8Array {
  return file.slice(0, Math.floor(file.byteLength * share));
}

export function multipartImage(
  image: Uint8Array,
  fields: Record<string, string> = { name: 'Test face' },
  filename = 'portrait.png',
  type = 'image/png',
): FormData {
  const form = new FormData();
  form.append('image', new Blob([image as Uint8Array<ArrayBuffer>], { type }), filename);
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  return form;
}
