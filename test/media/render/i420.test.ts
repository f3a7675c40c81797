// SPDX-License-Identifier: GPL-3.0-or-later
import { describe, expect, it } from 'vitest';
import { rgbToI420 } from '../../../src/media/render/index.js';

/**
 * The conversion the atlas builds run millions of times a build, written for speed (one pass per
 * plane, rounding without Math.round): against the plain definition, BT.601 limited range, each
 * chroma sample the mean of its 2x2 block, rounded half up and clamped, on every value it meets
 * (below 0 and above 255 included: a warp overshoots).
 */
function reference(rgb: Float32Array, w: number, h: number): Uint8Array {
  const byte = (v: number) => Math.min(255, Math.max(0, Math.round(v)));
  const out = new Uint8Array(w * h + 2 * (w / 2) * (h / 2));
  const at = (x: number, y: number, c: number) => rgb[(y * w + x) * 3 + c]!;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      out[y * w + x] = byte(0.257 * at(x, y, 0) + 0.504 * at(x, y, 1) + 0.098 * at(x, y, 2) + 16);
    }
  }
  for (let j = 0; j < h / 2; j++) {
    for (let i = 0; i < w / 2; i++) {
      const mean = (c: number) =>
        (at(2 * i, 2 * j, c) +
          at(2 * i + 1, 2 * j, c) +
          at(2 * i, 2 * j + 1, c) +
          at(2 * i + 1, 2 * j + 1, c)) /
        4;
      const [r, g, b] = [mean(0), mean(1), mean(2)];
      out[w * h + j * (w / 2) + i] = byte(-0.148 * r - 0.291 * g + 0.439 * b + 128);
      out[w * h + (w * h) / 4 + j * (w / 2) + i] = byte(0.439 * r - 0.368 * g - 0.071 * b + 128);
    }
  }
  return out;
}

describe('rgbToI420', () => {
  it('gives the plain definition byte for byte, halves and out-of-range values included', () => {
    const w = 64;
    const h = 48;
    const rgb = new Float32Array(w * h * 3);
    let seed = 7;
    const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
    for (let k = 0; k < rgb.length; k++) rgb[k] = random() * 300 - 20;
    // Whole and half values, greys (luma 0.859 x + 16) and the ends of the range.
    for (let k = 0; k < rgb.length / 3; k += 5) {
      const v = Math.round(random() * 255) + (k % 10 === 0 ? 0.5 : 0);
      rgb.set([v, v, v], k * 3);
    }
    rgb.set([0, 0, 0, 255, 255, 255, -1e-9, 0, 0, 255.0001, 255, 255], 0);
    const got = rgbToI420(rgb, w, h);
    const want = reference(rgb, w, h);
    const differ = got.reduce((n, v, k) => n + (v === want[k] ? 0 : 1), 0);
    expect(differ).toBe(0);
  });

  it('refuses an odd size', () => {
    expect(() => rgbToI420(new Float32Array(3 * 3 * 3), 3, 3)).toThrow(/even sizes/);
  });
});
