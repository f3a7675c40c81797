import sharp, { type Metadata, type OutputInfo, type Sharp } from 'sharp';
import { PhotoError } from './photoError.js';

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
  let image = open(source);
  if (!fits) image = image.resize({ width: maxSide, height: maxSide, fit: 'inside' });
  return toRgb(image);
}

/**
 * A square of the picture scaled by `scale`: the picture is resized as a whole (so every pixel
 * sits exactly where `scale` puts it) and the square at (`left`, `top`) of the result, in whole
 * pixels, is cut out; what lies outside the picture repeats its edge.
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
    open(source)
      .resize({ width, height, fit: 'fill', kernel: 'lanczos3' })
      .extract({ left: x0, top: y0, width: x1 - x0, height: y1 - y0 }),
  );
  const out = new Uint8Array(size * size * 3);
  for (let j = 0; j < size; j++) {
    const sj = Math.min(part.height - 1, Math.max(0, top + j - y0));
    for (let i = 0; i < size; i++) {
      const si = Math.min(part.width - 1, Math.max(0, left + i - x0));
      const s = (sj * part.width + si) * 3;
      const d = (j * size + i) * 3;
      out[d] = part.data[s] as number;
      out[d + 1] = part.data[s + 1] as number;
      out[d + 2] = part.data[s + 2] as number;
    }
  }
  return { width: size, height: size, data: out };
}

/** An RGB picture as a PNG (previews). */
export async function encodePng(picture: RgbPicture): Promise<Buffer> {
  return sharp(picture.data, {
    raw: { width: picture.width, height: picture.height, channels: 3 },
  })
    .png({ compressionLevel: 8 })
    .toBuffer();
}

function open(source: PhotoSource): Sharp {
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
