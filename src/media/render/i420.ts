// SPDX-License-Identifier: GPL-3.0-or-later
import type { Raster } from './raster.js';

/**
 * Planar YUV 4:2:0 as `@livekit/rtc-node` `VideoFrame` with `VideoBufferType.I420` reads it: the
 * Y plane (width x height), then U, then V (each ceil(w/2) x ceil(h/2)), tightly packed, no
 * padding. Colours are BT.601 limited range, what WebRTC encoders assume for I420.
 */
export interface I420Image {
  readonly width: number;
  readonly height: number;
  readonly data: Uint8Array;
}

export function i420Size(width: number, height: number): number {
  const cw = (width + 1) >> 1;
  const ch = (height + 1) >> 1;
  return width * height + 2 * cw * ch;
}

/** Byte offsets of the U and V planes in an I420 buffer. */
export function i420PlaneOffsets(width: number, height: number): { u: number; v: number } {
  const cw = (width + 1) >> 1;
  const ch = (height + 1) >> 1;
  return { u: width * height, v: width * height + cw * ch };
}

/**
 * Converts an opaque raster (even size) to I420. Atlas-build time only: per-frame work never
 * converts colour, it copies pre-converted pixels.
 */
export function rasterToI420(raster: Raster): I420Image {
  const { width: w, height: h, data: src } = raster;
  if (w % 2 !== 0 || h % 2 !== 0) throw new Error(`I420 sprites need even sizes, got ${w}x${h}`);
  const out = new Uint8Array(i420Size(w, h));
  for (let j = 0; j < h; j++) {
    for (let i = 0; i < w; i++) {
      const k = (j * w + i) * 4;
      // A 4x4 ordered dither hides the 8-bit banding of the soft gradients.
      const dither = ((BAYER_4X4[((j & 3) << 2) | (i & 3)] as number) + 0.5) / 16 - 0.5;
      out[j * w + i] = lumaOf(src[k] as number, src[k + 1] as number, src[k + 2] as number, dither);
    }
  }
  writeChroma(src, 4, w, h, out);
  return { width: w, height: h, data: out };
}

/**
 * Converts float RGB (3 values per pixel, 0..255, even size) to I420, without dither: photos
 * carry their own grain. Atlas-build time only.
 */
export function rgbToI420(rgb: Float32Array, w: number, h: number): Uint8Array {
  if (w % 2 !== 0 || h % 2 !== 0) throw new Error(`I420 sprites need even sizes, got ${w}x${h}`);
  const out = new Uint8Array(i420Size(w, h));
  for (let k = 0, p = 0; p < w * h; p++, k += 3) {
    out[p] = lumaOf(rgb[k] as number, rgb[k + 1] as number, rgb[k + 2] as number, 0);
  }
  writeChroma(rgb, 3, w, h, out);
  return out;
}

/**
 * The U and V planes of `out` from interleaved pixels (`channels` values each, R G B first):
 * each chroma sample is the mean of its 2x2 block (summed left to right, top to bottom).
 */
function writeChroma(
  px: Float32Array,
  channels: number,
  w: number,
  h: number,
  out: Uint8Array,
): void {
  const { u: uOff, v: vOff } = i420PlaneOffsets(w, h);
  const cw = w >> 1;
  const row = w * channels;
  const right = channels;
  const below = row;
  const diagonal = row + channels;
  for (let j = 0; j < h >> 1; j++) {
    let k = 2 * j * row;
    let o = j * cw;
    for (let i = 0; i < cw; i++, k += 2 * channels, o++) {
      const r = (px[k]! + px[k + right]! + px[k + below]! + px[k + diagonal]!) / 4;
      const g = (px[k + 1]! + px[k + right + 1]! + px[k + below + 1]! + px[k + diagonal + 1]!) / 4;
      const b = (px[k + 2]! + px[k + right + 2]! + px[k + below + 2]! + px[k + diagonal + 2]!) / 4;
      out[uOff + o] = clampByte(-0.148 * r - 0.291 * g + 0.439 * b + 128);
      out[vOff + o] = clampByte(0.439 * r - 0.368 * g - 0.071 * b + 128);
    }
  }
}

const BAYER_4X4 = [0, 8, 2, 10, 12, 4, 14, 6, 3, 11, 1, 9, 15, 7, 13, 5];

function lumaOf(r: number, g: number, b: number, dither: number): number {
  return clampByte(0.257 * r + 0.504 * g + 0.098 * b + 16 + dither);
}

/**
 * `v` rounded (halves up) into 0..255: Math.round's result for every `v`, without its cost
 * (from 0.5 up, v + 0.5 is exact or rounds within its unit, so truncating it is Math.round; the
 * atlas builds convert millions of pixels).
 */
function clampByte(v: number): number {
  return v < 0.5 ? 0 : v >= 254.5 ? 255 : (v + 0.5) | 0;
}

/** BT.601 limited-range YUV to sRGB, the inverse of the conversion above (for snapshots). */
export function i420ToRgb(image: I420Image): Uint8Array {
  const { width: w, height: h, data } = image;
  const { u: uOff, v: vOff } = i420PlaneOffsets(w, h);
  const cw = (w + 1) >> 1;
  const rgb = new Uint8Array(w * h * 3);
  for (let j = 0; j < h; j++) {
    for (let i = 0; i < w; i++) {
      const c = (j >> 1) * cw + (i >> 1);
      const y = 1.164 * ((data[j * w + i] as number) - 16);
      const u = (data[uOff + c] as number) - 128;
      const v = (data[vOff + c] as number) - 128;
      const k = (j * w + i) * 3;
      rgb[k] = clampByte(y + 1.596 * v);
      rgb[k + 1] = clampByte(y - 0.813 * v - 0.391 * u);
      rgb[k + 2] = clampByte(y + 2.018 * u);
    }
  }
  return rgb;
}
