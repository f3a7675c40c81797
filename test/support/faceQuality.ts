// Quality figures for photo avatars, measured the way the issue asks: face-recognition
// distance (face-api's recognition net, dlib's ResNet; same person under 0.6) and SSIM.
import sharp from 'sharp';
import { faceApiWith, tfjs } from '../../src/media/photo/faceModels.js';
import { i420ToRgb, type Rect } from '../../src/media/render/index.js';

export interface DescribedFace {
  box: { x: number; y: number; width: number; height: number };
  descriptor: Float32Array;
  /** The 68 landmarks (dlib's order) the detector places on the face, picture pixels. */
  landmarks: { x: number; y: number }[];
}

/** Every face in an RGB picture with its 128-d descriptor, largest first. */
export async function describeFaces(
  rgb: Uint8Array,
  width: number,
  height: number,
  minConfidence = 0.5,
): Promise<DescribedFace[]> {
  const faceapi = await faceApiWith('detector', 'landmarks', 'recognition');
  const tensor = tfjs().tensor3d(rgb, [height, width, 3], 'int32');
  try {
    const found = await faceapi
      .detectAllFaces(tensor as never, new faceapi.SsdMobilenetv1Options({ minConfidence }))
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
        landmarks: f.landmarks.positions.map((p) => ({ x: p.x, y: p.y })),
      }))
      .sort((a, b) => b.box.width * b.box.height - a.box.width * a.box.height);
  } finally {
    tensor.dispose();
  }
}

/** Faces in an encoded picture (PNG, JPEG...). */
export async function describeImage(
  bytes: Uint8Array,
  minConfidence?: number,
): Promise<DescribedFace[]> {
  const { data, info } = await sharp(bytes)
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  return describeFaces(new Uint8Array(data), info.width, info.height, minConfidence);
}

/** Faces in a 512x512 I420 frame. */
export function describeFrame(i420: Uint8Array, minConfidence?: number): Promise<DescribedFace[]> {
  return describeFaces(i420ToRgb({ width: 512, height: 512, data: i420 }), 512, 512, minConfidence);
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

type Pt = { x: number; y: number };

/**
 * The inside of an open mouth as a viewer sees it: the mean luma of its top band (just under
 * the upper lip: where the upper teeth are) and of its middle, between the inner lip landmarks
 * that a face detector places on the frame (61-63 above, 67-65 below), over the middle of the
 * mouth's width.
 */
export function innerMouthBands(
  luma: Float32Array,
  width: number,
  landmarks: readonly Pt[],
): { top: number; middle: number; height: number } {
  const pairs: [Pt, Pt][] = [
    [landmarks[61]!, landmarks[67]!],
    [landmarks[62]!, landmarks[66]!],
    [landmarks[63]!, landmarks[65]!],
  ];
  const lerp = (a: Pt, b: Pt, t: number): Pt => ({
    x: a.x + (b.x - a.x) * t,
    y: a.y + (b.y - a.y) * t,
  });
  const sample = (p: Pt) => {
    const x = Math.round(p.x - 0.5);
    const y = Math.round(p.y - 0.5);
    return luma[y * width + x] as number;
  };
  const band = (from: number, to: number) => {
    let sum = 0;
    let n = 0;
    // Across: from 61/67 to 63/65 in 9 steps; down: within the band in steps of a quarter pixel.
    for (let i = 0; i <= 8; i++) {
      const s = i / 8;
      const half = s < 0.5 ? 0 : 1;
      const t = s < 0.5 ? s * 2 : (s - 0.5) * 2;
      const up = lerp(pairs[half]![0], pairs[half + 1]![0], t);
      const down = lerp(pairs[half]![1], pairs[half + 1]![1], t);
      const gap = Math.hypot(down.x - up.x, down.y - up.y);
      const steps = Math.max(1, Math.round(gap * (to - from) * 4));
      for (let k = 0; k <= steps; k++) {
        sum += sample(lerp(up, down, from + ((to - from) * k) / steps));
        n++;
      }
    }
    return sum / n;
  };
  const height =
    pairs.reduce((h, [a, b]) => h + Math.hypot(b.x - a.x, b.y - a.y), 0) / pairs.length;
  return { top: band(0.05, 0.3), middle: band(0.4, 0.7), height };
}

/**
 * How tall the upper teeth show under the upper lip (px): along the middle of the mouth, from
 * the inner upper lip landmarks (61-63) towards the lower ones (67-65), the bright run that
 * starts in the upper third of the inner mouth, bright being above the middle of that line's
 * darkest and brightest. 0 where no teeth show, and where the detector's inner lips cross (the
 * lower landmark above the upper one, down the face): the lips are closed there, and the line
 * between the two landmarks runs up through the lips themselves (a closed mouth under a
 * moustache, Bill Murray's: 4.2 px of lip, luma 38 to 112, counted as teeth).
 */
export function upperTeethHeight(
  luma: Float32Array,
  width: number,
  landmarks: readonly Pt[],
): number {
  const pairs: [Pt, Pt][] = [
    [landmarks[61]!, landmarks[67]!],
    [landmarks[62]!, landmarks[66]!],
    [landmarks[63]!, landmarks[65]!],
  ];
  // Down the face: from the nose's tip to the chin.
  const nose = landmarks[33]!;
  const chin = landmarks[8]!;
  const downFace = { x: chin.x - nose.x, y: chin.y - nose.y };
  let total = 0;
  for (const [up, down] of pairs) {
    if ((down.x - up.x) * downFace.x + (down.y - up.y) * downFace.y <= 0) continue;
    const gap = Math.hypot(down.x - up.x, down.y - up.y);
    const steps = Math.max(2, Math.round(gap * 2));
    const line: number[] = [];
    for (let k = 0; k <= steps; k++) {
      const x = up.x + ((down.x - up.x) * k) / steps;
      const y = up.y + ((down.y - up.y) * k) / steps;
      line.push(luma[Math.round(y - 0.5) * width + Math.round(x - 0.5)] as number);
    }
    const threshold = (Math.max(...line) + Math.min(...line)) / 2;
    if (Math.max(...line) - Math.min(...line) < 30) continue;
    let start = -1;
    let end = -1;
    for (let k = 0; k <= steps; k++) {
      if ((line[k] as number) >= threshold) {
        if (start < 0 && k > steps / 3) break;
        if (start < 0) start = k;
        end = k;
      } else if (start >= 0) break;
    }
    if (start >= 0) total += ((end - start + 1) / (steps + 1)) * gap;
  }
  return total / pairs.length;
}

/**
 * How far the chin went down between two frames of the same face, as a share of the
 * nose-to-chin height: the chin's own pixels (a patch over its front and its contour, placed by
 * the rest frame's landmarks) found again in the open frame, shifted along the face's downward
 * axis (quarter-pixel steps, least squared difference). Independent of where a detector puts the
 * chin landmark on a warped face (beards, soft jaws).
 */
export function chinShiftShare(
  restLuma: Float32Array,
  openLuma: Float32Array,
  width: number,
  height: number,
  rest: readonly Pt[],
): number {
  const nose = rest[33]!;
  const chin = rest[8]!;
  const noseChin = Math.hypot(chin.x - nose.x, chin.y - nose.y);
  const down = { x: (chin.x - nose.x) / noseChin, y: (chin.y - nose.y) / noseChin };
  const across = { x: down.y, y: -down.x };
  const jaw = Math.hypot(rest[0]!.x - rest[16]!.x, rest[0]!.y - rest[16]!.y);
  const sample = (img: Float32Array, x: number, y: number) => {
    const fx = Math.min(width - 1.001, Math.max(0, x - 0.5));
    const fy = Math.min(height - 1.001, Math.max(0, y - 0.5));
    const x0 = Math.floor(fx);
    const y0 = Math.floor(fy);
    const ax = fx - x0;
    const ay = fy - y0;
    const k = y0 * width + x0;
    const top = img[k]! + (img[k + 1]! - img[k]!) * ax;
    const bottom = img[k + width]! + (img[k + width + 1]! - img[k + width]!) * ax;
    return top + (bottom - top) * ay;
  };
  // The patch: across the chin (a third of the jaw's width), from a quarter of the way up to the
  // nose down to a little below the chin's contour.
  const points: { x: number; y: number; luma: number }[] = [];
  for (let a = -jaw / 6; a <= jaw / 6; a += 1) {
    for (let d = -0.25 * noseChin; d <= 0.08 * noseChin; d += 1) {
      const x = chin.x + across.x * a + down.x * d;
      const y = chin.y + across.y * a + down.y * d;
      points.push({ x, y, luma: sample(restLuma, x, y) });
    }
  }
  let best = 0;
  let bestError = Infinity;
  for (let s = -0.05 * noseChin; s <= 0.3 * noseChin; s += 0.25) {
    let error = 0;
    for (const p of points) {
      error += (sample(openLuma, p.x + down.x * s, p.y + down.y * s) - p.luma) ** 2;
    }
    if (error < bestError) {
      bestError = error;
      best = s;
    }
  }
  return best / noseChin;
}
