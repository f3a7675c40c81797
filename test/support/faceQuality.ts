// SPDX-License-Identifier: GPL-3.0-or-later
// Quality figures for photo avatars, measured the way the issue asks: face-recognition
// distance (face-api's recognition net, dlib's ResNet; same person under 0.6) and SSIM.
import { createHash } from 'node:crypto';
import sharp from 'sharp';
import { faceApiWith, tfjs } from '../../src/media/photo/faceModels.js';
import { i420ToRgb, type Rect } from '../../src/media/render/index.js';
import { storedOncePerRun } from './oncePerRun.js';

export interface DescribedFace {
  box: { x: number; y: number; width: number; height: number };
  /** face-api's descriptor: of the detector's box, as found (not turned, scaled or centred). */
  descriptor: Float32Array;
  /**
   * The descriptor of the face aligned as the recognition net was trained on it (alignedChip):
   * independent of the face's roll, size, place and surroundings.
   */
  alignedDescriptor: Float32Array;
  /** The 68 landmarks (dlib's order) the detector places on the face, picture pixels. */
  landmarks: { x: number; y: number }[];
}

const described = new Map<string, Promise<DescribedFace[]>>();

/**
 * Every face in an RGB picture with its 128-d descriptor, largest first.
 *
 * Measured once per picture per run: the photo files describe the same pictures (photoMouth and
 * mouthUpClose measure ten of the same portraits' photo, rest and widest-open frames through
 * measurePortrait; lipMeasure describes the same photos as given; photoMouth's identity and
 * small-photo cases describe pictures its table already did), and the same pixels give the same
 * faces. Keyed by the pixels and the confidence,
 * kept in this process and in the run's scratch folder (storedOncePerRun) for the other files;
 * each caller gets its own copy.
 */
export async function describeFaces(
  rgb: Uint8Array,
  width: number,
  height: number,
  minConfidence = 0.5,
): Promise<DescribedFace[]> {
  const key = createHash('sha256')
    .update(rgb)
    .update(`${width}x${height}, from ${minConfidence}`)
    .digest('hex');
  let faces = described.get(key);
  if (!faces) {
    faces = storedOncePerRun('faces', key, () => findFaces(rgb, width, height, minConfidence));
    described.set(key, faces);
    // A failure is not kept: the next caller measures again.
    faces.catch(() => described.delete(key));
  }
  return structuredClone(await faces);
}

/** describeFaces' measure itself: face-api's detector, landmarks and recognition net. */
async function findFaces(
  rgb: Uint8Array,
  width: number,
  height: number,
  minConfidence: number,
): Promise<DescribedFace[]> {
  const faceapi = await faceApiWith('detector', 'landmarks', 'recognition');
  const tensor = tfjs().tensor3d(rgb, [height, width, 3], 'int32');
  try {
    const found = await faceapi
      .detectAllFaces(tensor as never, new faceapi.SsdMobilenetv1Options({ minConfidence }))
      .withFaceLandmarks()
      .withFaceDescriptors();
    const faces: DescribedFace[] = [];
    for (const f of found) {
      const landmarks = f.landmarks.positions.map((p) => ({ x: p.x, y: p.y }));
      const chip = tfjs().tensor3d(
        alignedChip(rgb, width, height, landmarks),
        [CHIP_SIZE, CHIP_SIZE, 3],
        'int32',
      );
      try {
        faces.push({
          box: {
            x: f.detection.box.x,
            y: f.detection.box.y,
            width: f.detection.box.width,
            height: f.detection.box.height,
          },
          descriptor: f.descriptor,
          alignedDescriptor: (await faceapi.computeFaceDescriptor(chip as never)) as Float32Array,
          landmarks,
        });
      } finally {
        chip.dispose();
      }
    }
    return faces.sort((a, b) => b.box.width * b.box.height - a.box.width * a.box.height);
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

/**
 * dlib's mean face: where landmarks 17 to 67 (brows, nose, eyes, mouth) sit in a unit square,
 * the template its face chips are aligned to (dlib/image_transforms/interpolation.h,
 * get_face_chip_details). face-api's recognition net is dlib's ResNet, trained on such chips.
 */
const MEAN_FACE_X = [
  0.000213256, 0.0752622, 0.18113, 0.29077, 0.393397, 0.586856, 0.689483, 0.799124, 0.904991,
  0.98004, 0.490127, 0.490127, 0.490127, 0.490127, 0.36688, 0.426036, 0.490127, 0.554217, 0.613373,
  0.121737, 0.187122, 0.265825, 0.334606, 0.260918, 0.182743, 0.645647, 0.714428, 0.793132,
  0.858516, 0.79751, 0.719335, 0.254149, 0.340985, 0.428858, 0.490127, 0.551395, 0.639268, 0.726104,
  0.642159, 0.556721, 0.490127, 0.423532, 0.338094, 0.290379, 0.428096, 0.490127, 0.552157,
  0.689874, 0.553364, 0.490127, 0.42689,
];
const MEAN_FACE_Y = [
  0.106454, 0.038915, 0.0187482, 0.0344891, 0.0773906, 0.0773906, 0.0344891, 0.0187482, 0.038915,
  0.106454, 0.203352, 0.307009, 0.409805, 0.515625, 0.587326, 0.609345, 0.628106, 0.609345,
  0.587326, 0.216423, 0.178758, 0.179852, 0.231733, 0.245099, 0.244077, 0.231733, 0.179852,
  0.178758, 0.216423, 0.244077, 0.245099, 0.780233, 0.745405, 0.727388, 0.742578, 0.727388,
  0.745405, 0.780233, 0.864805, 0.902192, 0.909281, 0.902192, 0.864805, 0.784792, 0.778746,
  0.785343, 0.778746, 0.784792, 0.824182, 0.831803, 0.824182,
];
/** dlib's face chip for recognition: 150 px, a quarter of the template's size as margin. */
const CHIP_SIZE = 150;
const CHIP_PADDING = 0.25;

/**
 * The face as dlib aligns it for its recognition net (get_face_chip_details(shape, 150, 0.25)
 * and extract_image_chip): the similarity (turn, scale, shift) that best takes landmarks 17 to
 * 67 onto the mean face, least squares, then the 150 x 150 RGB chip it frames, each chip pixel
 * the mean of a grid of bilinear samples as fine as the picture's pixels (no aliasing when it
 * shrinks a large face). face-api instead describes the detector's box as it stands, so a
 * tilted head, a grey border or a tighter crop moved a close-up 0.3 to 0.4 from itself.
 */
export function alignedChip(
  rgb: Uint8Array,
  width: number,
  height: number,
  landmarks: readonly { x: number; y: number }[],
): Uint8Array {
  const from = landmarks.slice(17, 68);
  const to = MEAN_FACE_X.map((x, i) => ({
    x: ((CHIP_PADDING + x) / (2 * CHIP_PADDING + 1)) * CHIP_SIZE,
    y: ((CHIP_PADDING + MEAN_FACE_Y[i]!) / (2 * CHIP_PADDING + 1)) * CHIP_SIZE,
  }));
  const mean = (pts: readonly { x: number; y: number }[]) => ({
    x: pts.reduce((s, p) => s + p.x, 0) / pts.length,
    y: pts.reduce((s, p) => s + p.y, 0) / pts.length,
  });
  const mf = mean(from);
  const mt = mean(to);
  // q - mt = [a -b; b a] (p - mf): a + ib = sum(conj(p') q') / sum(|p'|^2).
  let re = 0;
  let im = 0;
  let norm = 0;
  for (const [i, p] of from.entries()) {
    const px = p.x - mf.x;
    const py = p.y - mf.y;
    const qx = to[i]!.x - mt.x;
    const qy = to[i]!.y - mt.y;
    re += px * qx + py * qy;
    im += px * qy - py * qx;
    norm += px * px + py * py;
  }
  const a = re / norm;
  const b = im / norm;
  const scale2 = a * a + b * b;
  // Picture pixels per chip pixel, and the sampling grid per chip pixel that it asks for.
  const grid = Math.max(1, Math.ceil(1 / Math.sqrt(scale2)));
  const sample = (x: number, y: number, c: number) => bilinear(rgb, width, height, 3, x, y, c);
  const chip = new Uint8Array(CHIP_SIZE * CHIP_SIZE * 3);
  for (let v = 0; v < CHIP_SIZE; v++) {
    for (let u = 0; u < CHIP_SIZE; u++) {
      const sums = [0, 0, 0];
      for (let gy = 0; gy < grid; gy++) {
        for (let gx = 0; gx < grid; gx++) {
          // The chip point, back in the picture: p = mf + [a b; -b a] (q - mt) / (a^2 + b^2).
          const qx = u + (gx + 0.5) / grid - mt.x;
          const qy = v + (gy + 0.5) / grid - mt.y;
          const x = mf.x + (a * qx + b * qy) / scale2;
          const y = mf.y + (-b * qx + a * qy) / scale2;
          for (let c = 0; c < 3; c++) sums[c]! += sample(x, y, c);
        }
      }
      for (let c = 0; c < 3; c++) {
        chip[(v * CHIP_SIZE + u) * 3 + c] = Math.round(sums[c]! / (grid * grid));
      }
    }
  }
  return chip;
}

/**
 * Channel `c` of a picture of `channels` interleaved channels at (x, y), pixel centres at
 * half-pixels, interpolated between the four nearest pixels; held at the picture's edges.
 */
export function bilinear(
  img: ArrayLike<number>,
  width: number,
  height: number,
  channels: number,
  x: number,
  y: number,
  c: number,
): number {
  const fx = Math.min(width - 1.001, Math.max(0, x - 0.5));
  const fy = Math.min(height - 1.001, Math.max(0, y - 0.5));
  const x0 = Math.floor(fx);
  const y0 = Math.floor(fy);
  const ax = fx - x0;
  const ay = fy - y0;
  const k = (y0 * width + x0) * channels + c;
  const row = width * channels;
  const top = img[k]! + (img[k + channels]! - img[k]!) * ax;
  const bottom = img[k + row]! + (img[k + row + channels]! - img[k + row]!) * ax;
  return top + (bottom - top) * ay;
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
  const sample = (img: Float32Array, x: number, y: number) =>
    bilinear(img, width, height, 1, x, y, 0);
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

/**
 * The gap between the inner lips (px) that a face detector places on a frame: the mean over the
 * middle of the mouth (61-67, 62-66, 63-65) of each lower landmark's distance below its upper
 * one, along the face's downward axis (nose tip 33 to chin 8); lips that cross count as 0. And
 * the nose-to-chin height it is measured against.
 */
export function innerLipGap(landmarks: readonly Pt[]): { gap: number; noseToChin: number } {
  const nose = landmarks[33]!;
  const chin = landmarks[8]!;
  const noseToChin = Math.hypot(chin.x - nose.x, chin.y - nose.y);
  const down = { x: (chin.x - nose.x) / noseToChin, y: (chin.y - nose.y) / noseToChin };
  const pairs: [number, number][] = [
    [61, 67],
    [62, 66],
    [63, 65],
  ];
  let gap = 0;
  for (const [u, l] of pairs) {
    const d =
      (landmarks[l]!.x - landmarks[u]!.x) * down.x + (landmarks[l]!.y - landmarks[u]!.y) * down.y;
    gap += Math.max(0, d);
  }
  return { gap: gap / pairs.length, noseToChin };
}

/**
 * The 68 landmarks of the largest face in an RGB picture (no descriptors: a fraction of
 * `describeFaces`' work), or undefined where none scores `minConfidence`.
 */
export async function faceLandmarks(
  rgb: Uint8Array,
  width: number,
  height: number,
  minConfidence = 0.2,
): Promise<Pt[] | undefined> {
  const faceapi = await faceApiWith('detector', 'landmarks');
  const tensor = tfjs().tensor3d(rgb, [height, width, 3], 'int32');
  try {
    const found = await faceapi
      .detectAllFaces(tensor as never, new faceapi.SsdMobilenetv1Options({ minConfidence }))
      .withFaceLandmarks();
    const largest = found.sort(
      (a, b) =>
        b.detection.box.width * b.detection.box.height -
        a.detection.box.width * a.detection.box.height,
    )[0];
    return largest?.landmarks.positions.map((p) => ({ x: p.x, y: p.y }));
  } finally {
    tensor.dispose();
  }
}
