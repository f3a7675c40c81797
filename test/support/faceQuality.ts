// Quality figures for photo avatars, measured the way the issue asks: face-recognition
// distance (face-api's recognition net, dlib's ResNet; same person under 0.6) and SSIM.
import sharp from 'sharp';
import { faceApiWith, tfjs } from '../../src/media/photo/faceModels.js';
import { i420ToRgb, type Rect } from '../../src/media/render/index.js';

export interface DescribedFace {
  box: { x: number; y: number; width: number; height: number };
  descriptor: Float32Array;
}

/** Every face in an RGB picture with its 128-d descriptor, largest first. */
export async function describeFaces(
  rgb: Uint8Array,
  width: number,
  height: number,
): Promise<DescribedFace[]> {
  const faceapi = await faceApiWith('detector', 'landmarks', 'recognition');
  const tensor = tfjs().tensor3d(rgb, [height, width, 3], 'int32');
  try {
    const found = await faceapi
      .detectAllFaces(tensor as never, new faceapi.SsdMobilenetv1Options({ minConfidence: 0.5 }))
      .withFaceLandmarks()
      .withFaceDescriptors();
    return found
      .map((f) => ({
        box: {
          x: f.detection.box.x,
          y: f.detection.box.y,
          width: f.detection.box.width,
          height: f.detection.box.height,
        },
        descriptor: f.descriptor,
      }))
      .sort((a, b) => b.box.width * b.box.height - a.box.width * a.box.height);
  } finally {
    tensor.dispose();
  }
}

/** Faces in an encoded picture (PNG, JPEG...). */
export async function describeImage(bytes: Uint8Array): Promise<DescribedFace[]> {
  const { data, info } = await sharp(bytes)
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  return describeFaces(new Uint8Array(data), info.width, info.height);
}

/** Faces in a 512x512 I420 frame. */
export function describeFrame(i420: Uint8Array): Promise<DescribedFace[]> {
  return describeFaces(i420ToRgb({ width: 512, height: 512, data: i420 }), 512, 512);
}

export function faceDistance(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += ((a[i] as number) - (b[i] as number)) ** 2;
  return Math.sqrt(sum);
}

/** Luma (BT.601) of packed RGB. */
export function lumaOf(rgb: Uint8Array): Float32Array {
  const out = new Float32Array(rgb.length / 3);
  for (let i = 0; i < out.length; i++) {
    out[i] =
      0.299 * (rgb[i * 3] as number) +
      0.587 * (rgb[i * 3 + 1] as number) +
      0.114 * (rgb[i * 3 + 2] as number);
  }
  return out;
}

/**
 * Mean SSIM of two luma images over 8x8 windows (stride 4, the usual constants for 8-bit
 * data), skipping every window that touches an excluded rectangle.
 */
export function maskedSsim(
  a: Float32Array,
  b: Float32Array,
  width: number,
  height: number,
  exclude: readonly Rect[],
): number {
  const C1 = (0.01 * 255) ** 2;
  const C2 = (0.03 * 255) ** 2;
  const W = 8;
  let total = 0;
  let windows = 0;
  for (let y = 0; y + W <= height; y += 4) {
    for (let x = 0; x + W <= width; x += 4) {
      const touches = exclude.some(
        (r) => x < r.x + r.width && x + W > r.x && y < r.y + r.height && y + W > r.y,
      );
      if (touches) continue;
      let ma = 0;
      let mb = 0;
      for (let j = 0; j < W; j++) {
        for (let i = 0; i < W; i++) {
          ma += a[(y + j) * width + x + i] as number;
          mb += b[(y + j) * width + x + i] as number;
        }
      }
      ma /= W * W;
      mb /= W * W;
      let va = 0;
      let vb = 0;
      let cov = 0;
      for (let j = 0; j < W; j++) {
        for (let i = 0; i < W; i++) {
          const da = (a[(y + j) * width + x + i] as number) - ma;
          const db = (b[(y + j) * width + x + i] as number) - mb;
          va += da * da;
          vb += db * db;
          cov += da * db;
        }
      }
      const n = W * W - 1;
      va /= n;
      vb /= n;
      cov /= n;
      total += ((2 * ma * mb + C1) * (2 * cov + C2)) / ((ma * ma + mb * mb + C1) * (va + vb + C2));
      windows++;
    }
  }
  return windows ? total / windows : 1;
}
