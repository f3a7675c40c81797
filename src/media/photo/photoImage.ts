// SPDX-License-Identifier: GPL-3.0-or-later
import type { Metadata, OutputInfo, Sharp } from 'sharp';
import { PhotoError } from './photoError.js';
import { fillPadding, type PaddingCorner } from './photoPadding.js';

/**
 * Reading untrusted pictures with sharp (libvips, prebuilt binaries from npm). Only JPEG, PNG
 * and WebP are accepted, recognised by their signature before sharp sees them; the size is read
 * from the header and refused before anything is decoded; corrupt and truncated data fail the
 * decode (sharp's `failOn: 'warning'`, its setting for untrusted input). Decoding runs on
 * libuv's thread pool, off the event loop.
 */
export type PhotoFormat = 'jpeg' | 'png' | 'webp';

export const PHOTO_CONTENT_TYPES: Record<PhotoFormat, string> = {
  jpeg: 'image/jpeg',
  png: 'image/png',
  webp: 'image/webp',
};

export interface PhotoLimits {
  /** Decoded size limit, pixels (default 40 megapixels). */
  maxPixels: number;
}

export const DEFAULT_PHOTO_LIMITS: PhotoLimits = { maxPixels: 40_000_000 };

/** The pictures' background, where a PNG or WebP is transparent. */
const FLATTEN_ONTO = { r: 240, g: 240, b: 240 };

/** An RGB picture, 3 bytes per pixel, rows top to bottom. */
export interface RgbPicture {
  width: number;
  height: number;
  data: Uint8Array;
}

export function sniffPhotoFormat(bytes: Uint8Array): PhotoFormat | undefined {
  const b = (i: number) => bytes[i];
  if (b(0) === 0xff && b(1) === 0xd8 && b(2) === 0xff) return 'jpeg';
  if ([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a].every((v, i) => b(i) === v)) {
    return 'png';
  }
  const ascii = (from: number, to: number) =>
    Buffer.from(bytes.subarray(from, to)).toString('latin1');
  if (bytes.byteLength >= 12 && ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return 'webp';
  return undefined;
}

/** A picture as uploaded, checked: its format and its size once turned upright (EXIF). */
export interface PhotoSource {
  bytes: Uint8Array;
  format: PhotoFormat;
  width: number;
  height: number;
}

/** Format and size from the header; refuses what is not a JPEG, PNG or WebP, or too large. */
export async function probePhoto(
  bytes: Uint8Array,
  limits: PhotoLimits = DEFAULT_PHOTO_LIMITS,
): Promise<PhotoSource> {
  const format = sniffPhotoFormat(bytes);
  if (!format) {
    throw new PhotoError('unsupported_image', 'The image is not a JPEG, PNG or WebP picture.');
  }
  let meta: Metadata;
  try {
    const sharp = await sharpLibrary();
    meta = await sharp(bytes, { limitInputPixels: false }).metadata();
  } catch (err) {
    throw unreadable(err);
  }
  if (meta.format !== format && !(format === 'jpeg' && meta.format === 'jpeg')) {
    throw new PhotoError('unreadable_image', `The ${format} picture could not be read.`);
  }
  const width = meta.autoOrient?.width ?? meta.width;
  const height = meta.autoOrient?.height ?? meta.height;
  if (!width || !height) throw new PhotoError('unreadable_image', 'The picture has no size.');
  if (width * height > limits.maxPixels) {
    throw new PhotoError(
      'image_too_large',
      `The picture is ${((width * height) / 1e6).toFixed(1)} megapixels; at most ${(limits.maxPixels / 1e6).toFixed(0)} are accepted.`,
    );
  }
  return { bytes, format, width, height };
}

/** The whole picture, upright, at most `maxSide` px on its longer side (for face detection). */
export async function decodeFitted(source: PhotoSource, maxSide: number): Promise<RgbPicture> {
  const fits = Math.max(source.width, source.height) <= maxSide;
  let image = await open(source);
  if (!fits) image = image.resize({ width: maxSide, height: maxSide, fit: 'inside' });
  return toRgb(image);
}

/**
 * A square of the picture scaled by `scale`: the picture is resized as a whole (so every pixel
 * sits exactly where `scale` puts it) and the square at (`left`, `top`) of the result, in whole
 * pixels, is cut out; what lies outside the picture is the picture mirrored at its edge (the
 * pixel next to the edge repeats it; no streaks where a frame reaches past a close-up's bottom
 * edge, see framing.ts).
 */
export async function decodeSquare(
  source: PhotoSource,
  scale: number,
  square: { left: number; top: number; size: number },
): Promise<RgbPicture> {
  const width = Math.max(1, Math.round(source.width * scale));
  const height = Math.max(1, Math.round(source.height * scale));
  const { left, top, size } = square;
  const x0 = Math.max(0, left);
  const y0 = Math.max(0, top);
  const x1 = Math.min(width, left + size);
  const y1 = Math.min(height, top + size);
  if (x1 <= x0 || y1 <= y0) throw new RangeError('the square lies outside the picture');
  const part = await toRgb(
    (await open(source))
      .resize({ width, height, fit: 'fill', kernel: 'lanczos3' })
      .extract({ left: x0, top: y0, width: x1 - x0, height: y1 - y0 }),
  );
  const out = new Uint8Array(size * size * 3);
  for (let j = 0; j < size; j++) {
    const sj = mirrorInside(top + j - y0, part.height);
    for (let i = 0; i < size; i++) {
      const si = mirrorInside(left + i - x0, part.width);
      const s = (sj * part.width + si) * 3;
      const d = (j * size + i) * 3;
      out[d] = part.data[s] as number;
      out[d + 1] = part.data[s + 1] as number;
      out[d + 2] = part.data[s + 2] as number;
    }
  }
  return { width: size, height: size, data: out };
}

/** Index `i` of a row or column `n` long, mirrored back into it (-1 is 0, n is n - 1). */
function mirrorInside(i: number, n: number): number {
  const m = i < 0 ? -i - 1 : i >= n ? 2 * n - 1 - i : i;
  return Math.min(n - 1, Math.max(0, m));
}

/** A square of a picture, px. */
export interface Region {
  left: number;
  top: number;
  size: number;
}

/** A part of a picture turned in its plane (see turnRegion), and where its points went. */
export interface TurnedRegion {
  /** The turned part as a picture of its own (a lossless PNG; `format` is the original's). */
  source: PhotoSource;
  /** A point of the original picture in the turned one. */
  map: (p: { x: number; y: number }) => { x: number; y: number };
  /** A point of the turned picture in the original one (map's inverse). */
  unmap: (p: { x: number; y: number }) => { x: number; y: number };
}

/**
 * The square `region` of the picture (what lies inside the picture of it), turned clockwise by
 * `degrees` about its centre, as a new picture: the corners that the turn brings in are the
 * region's mean colour. Used to turn a tilted head upright before the frame is cut. The
 * picture's own `padding` (the flat corners of a picture turned before it was uploaded,
 * photoPadding.ts) is filled from the picture first.
 */
export async function turnRegion(
  source: PhotoSource,
  region: Region,
  degrees: number,
  padding: readonly PaddingCorner[] = [],
): Promise<TurnedRegion> {
  const left = Math.round(region.left);
  const top = Math.round(region.top);
  const size = Math.round(region.size);
  const x0 = Math.max(0, left);
  const y0 = Math.max(0, top);
  const x1 = Math.min(source.width, left + size);
  const y1 = Math.min(source.height, top + size);
  if (x1 - x0 < 2 || y1 - y0 < 2) throw new RangeError('the region lies outside the picture');
  const inside = await toRgb(
    (await open(source)).extract({ left: x0, top: y0, width: x1 - x0, height: y1 - y0 }),
  );
  fillPadding(inside, { x: x0, y: y0 }, padding);
  // What the region has outside the picture is the picture mirrored at its edge (no flat
  // corners in the frame), then the whole square is turned.
  const part = await extendMirrored(inside, {
    left: x0 - left,
    top: y0 - top,
    right: left + size - x1,
    bottom: top + size - y1,
  });
  const raw = { raw: { width: part.width, height: part.height, channels: 3 as const } };
  const sharp = await sharpLibrary();
  const { channels } = await sharp(part.data, raw).stats();
  const background = {
    r: Math.round(channels[0]?.mean ?? 128),
    g: Math.round(channels[1]?.mean ?? 128),
    b: Math.round(channels[2]?.mean ?? 128),
  };
  const { data, info } = await sharp(part.data, raw)
    .rotate(degrees, { background })
    .png({ compressionLevel: 1 })
    .toBuffer({ resolveWithObject: true });
  const cx = left + part.width / 2;
  const cy = top + part.height / 2;
  const cos = Math.cos((degrees * Math.PI) / 180);
  const sin = Math.sin((degrees * Math.PI) / 180);
  return {
    source: {
      bytes: new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
      format: source.format,
      width: info.width,
      height: info.height,
    },
    map: ({ x, y }) => {
      const dx = x - cx;
      const dy = y - cy;
      return { x: info.width / 2 + dx * cos - dy * sin, y: info.height / 2 + dx * sin + dy * cos };
    },
    unmap: ({ x, y }) => {
      const dx = x - info.width / 2;
      const dy = y - info.height / 2;
      return { x: cx + dx * cos + dy * sin, y: cy - dx * sin + dy * cos };
    },
  };
}

/** The picture grown by mirroring its edges (repeating them where a mirror is too short). */
async function extendMirrored(
  picture: RgbPicture,
  by: { left: number; top: number; right: number; bottom: number },
): Promise<RgbPicture> {
  if (by.left + by.top + by.right + by.bottom === 0) return picture;
  const raw = { raw: { width: picture.width, height: picture.height, channels: 3 as const } };
  const mirrorFits =
    Math.max(by.left, by.right) < picture.width && Math.max(by.top, by.bottom) < picture.height;
  const sharp = await sharpLibrary();
  return toRgb(
    sharp(picture.data, raw).extend({ ...by, extendWith: mirrorFits ? 'mirror' : 'copy' }),
  );
}

/** An RGB picture as a PNG (previews). */
export async function encodePng(picture: RgbPicture): Promise<Buffer> {
  const sharp = await sharpLibrary();
  return sharp(picture.data, {
    raw: { width: picture.width, height: picture.height, channels: 3 },
  })
    .png({ compressionLevel: 8 })
    .toBuffer();
}

/**
 * sharp (libvips), loaded on first use: a process that reads no picture (an API process's
 * start-up, a media worker with stock avatars only) does not pay for loading it.
 */
let sharpLoading: Promise<typeof import('sharp').default> | undefined;
function sharpLibrary(): Promise<typeof import('sharp').default> {
  sharpLoading ??= import('sharp').then((m) => m.default);
  return sharpLoading;
}

async function open(source: PhotoSource): Promise<Sharp> {
  const sharp = await sharpLibrary();
  // The header said the size is within the limit; sharp checks it again while decoding.
  return sharp(source.bytes, {
    failOn: 'warning',
    limitInputPixels: source.width * source.height + 1,
  })
    .autoOrient()
    .flatten({ background: FLATTEN_ONTO });
}

async function toRgb(image: Sharp): Promise<RgbPicture> {
  let result: { data: Buffer; info: OutputInfo };
  try {
    result = await image.toColourspace('srgb').removeAlpha().raw().toBuffer({
      resolveWithObject: true,
    });
  } catch (err) {
    throw unreadable(err);
  }
  const { data, info } = result;
  if (info.channels !== 3)
    throw new PhotoError('unreadable_image', 'The picture has no colour channels.');
  return {
    width: info.width,
    height: info.height,
    data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
  };
}

function unreadable(err: unknown): PhotoError {
  const reason = err instanceof Error ? err.message.split('\n')[0] : String(err);
  return new PhotoError('unreadable_image', `The picture is corrupt or truncated (${reason}).`);
}
