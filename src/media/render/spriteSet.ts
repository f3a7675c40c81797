// SPDX-License-Identifier: GPL-3.0-or-later
import { FRAME_HEIGHT, FRAME_WIDTH, type Rect } from './faceGeometry.js';
import { i420PlaneOffsets } from './i420.js';

/**
 * Same-sized I420 sprites of one face part (all eye states, or all mouth shapes) with the pixels
 * where they differ from each other, as row spans. Pasting only those pixels leaves everything
 * the sprites have in common (skin, hair edges, glasses) to the underlying frame, which may sit
 * at a sub-pixel position: no seam where hair or frames cross the sprite's rectangle.
 */
export interface SpriteSet {
  readonly rect: Rect;
  readonly sprites: readonly Uint8Array[];
  /** Luma spans as (row, first column, length) triples, in sprite coordinates. */
  readonly lumaSpans: Int32Array;
  /** Chroma spans, same layout, in chroma samples. */
  readonly chromaSpans: Int32Array;
}

/** Pixels this close to a varying one are pasted too, so anti-aliased edges come along. */
const DILATE = 2;

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

const FRAME_UV = i420PlaneOffsets(FRAME_WIDTH, FRAME_HEIGHT);
const FRAME_CHROMA_WIDTH = FRAME_WIDTH >> 1;

/**
 * Copies the varying pixels of sprite `index` into a 512x512 I420 frame at the set's rectangle
 * moved by (dx, dy). Chroma goes to the nearest chroma position: an odd offset shifts colour by
 * half a chroma sample, which does not show on a face.
 */
export function pasteSprite(
  out: Uint8Array,
  set: SpriteSet,
  index: number,
  dx: number,
  dy: number,
): void {
  const sprite = set.sprites[index];
  if (!sprite) return;
  const { width: w, height: h } = set.rect;
  const x = set.rect.x + dx;
  const y = set.rect.y + dy;
  const luma = set.lumaSpans;
  for (let s = 0; s < luma.length; s += 3) {
    const j = luma[s] as number;
    const i0 = luma[s + 1] as number;
    const n = luma[s + 2] as number;
    const src = j * w + i0;
    const dst = (y + j) * FRAME_WIDTH + x + i0;
    for (let i = 0; i < n; i++) out[dst + i] = sprite[src + i] as number;
  }
  const cw = w >> 1;
  const uSrc = w * h;
  const vSrc = uSrc + cw * (h >> 1);
  const cx = x >> 1;
  const cy = y >> 1;
  const chroma = set.chromaSpans;
  for (let s = 0; s < chroma.length; s += 3) {
    const j = chroma[s] as number;
    const i0 = chroma[s + 1] as number;
    const n = chroma[s + 2] as number;
    const src = j * cw + i0;
    const dst = (cy + j) * FRAME_CHROMA_WIDTH + cx + i0;
    for (let i = 0; i < n; i++) {
      out[FRAME_UV.u + dst + i] = sprite[uSrc + src + i] as number;
      out[FRAME_UV.v + dst + i] = sprite[vSrc + src + i] as number;
    }
  }
}
