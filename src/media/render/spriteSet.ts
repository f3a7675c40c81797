// SPDX-License-Identifier: GPL-3.0-or-later
import type { SpriteSet } from '@visage-avatar/web/composition';
import type { Rect } from './faceGeometry.js';
import { i420PlaneOffsets } from './i420.js';

export type { SpriteSet };

/** Pixels this close to a varying one are pasted too, so anti-aliased edges come along. */
const DILATE = 2;

/**
 * Same-sized I420 sprites of one face part (all eye states, or all mouth shapes) with the pixels
 * where they differ from each other, as row spans (the atlas's `SpriteSet`, pasted by
 * `composeFrame`). Pasting only those pixels leaves everything the sprites have in common (skin,
 * hair edges, glasses) to the underlying frame, which may sit at a sub-pixel position: no seam
 * where hair or frames cross the sprite's rectangle.
 */
export function spriteSet(rect: Rect, sprites: Uint8Array[]): SpriteSet {
  const { width: w, height: h } = rect;
  const first = sprites[0];
  if (!first) throw new Error('a sprite set needs sprites');
  const varies = new Uint8Array(w * h);
  const cw = w >> 1;
  const ch = h >> 1;
  const { u: uOff, v: vOff } = i420PlaneOffsets(w, h);
  for (const s of sprites) {
    for (let j = 0; j < h; j++) {
      for (let i = 0; i < w; i++) {
        const k = j * w + i;
        const c = (j >> 1) * cw + (i >> 1);
        if (
          s[k] !== first[k] ||
          s[uOff + c] !== first[uOff + c] ||
          s[vOff + c] !== first[vOff + c]
        ) {
          varies[k] = 1;
        }
      }
    }
  }
  const mask = new Uint8Array(w * h);
  for (let j = 0; j < h; j++) {
    for (let i = 0; i < w; i++) {
      if (!varies[j * w + i]) continue;
      for (let y = Math.max(0, j - DILATE); y <= Math.min(h - 1, j + DILATE); y++) {
        for (let x = Math.max(0, i - DILATE); x <= Math.min(w - 1, i + DILATE); x++) {
          mask[y * w + x] = 1;
        }
      }
    }
  }
  const chromaMask = new Uint8Array(cw * ch);
  for (let j = 0; j < h; j++) {
    for (let i = 0; i < w; i++) if (mask[j * w + i]) chromaMask[(j >> 1) * cw + (i >> 1)] = 1;
  }
  return {
    rect,
    sprites,
    lumaSpans: spansOf(mask, w, h),
    chromaSpans: spansOf(chromaMask, cw, ch),
  };
}

function spansOf(mask: Uint8Array, w: number, h: number): Int32Array {
  const out: number[] = [];
  for (let j = 0; j < h; j++) {
    let i = 0;
    while (i < w) {
      if (!mask[j * w + i]) {
        i++;
        continue;
      }
      const start = i;
      while (i < w && mask[j * w + i]) i++;
      out.push(j, start, i - start);
    }
  }
  return Int32Array.from(out);
}
