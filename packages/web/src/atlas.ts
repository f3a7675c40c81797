// SPDX-License-Identifier: Apache-2.0
import { VISAGE_VISEMES } from '@visage-avatar/client/face';
import {
  BREATH_LEVELS,
  LID_LEVELS,
  MOUTH_LEVELS,
  SWAY_OFFSETS,
  type PoseBlend,
  type Rect,
  type SpriteSet,
} from './composition.js';

export { BREATH_LEVELS, LID_LEVELS, MOUTH_LEVELS, SWAY_OFFSETS, type Rect, type SpriteSet };

/**
 * A Visage avatar's atlas as a browser reads it (docs/face-stream.md, "The atlas file"):
 * `VSGATLAS`, a little-endian u32 header length, a JSON header, zero padding to 8 bytes, then the
 * payload. Every `[offset, count]` of the header's layout is a byte offset into the payload and
 * an element count. Pictures are I420 (BT.601 limited range). Decoding checks that every part
 * lies inside the payload and has the documented shape, so a damaged or foreign file is refused
 * instead of drawn out of bounds.
 */

export interface Atlas {
  readonly avatarId: string;
  readonly width: number;
  readonly height: number;
  /** 12 whole frames, index `breath * 3 + sway`. */
  readonly poses: readonly Uint8Array[];
  /** 9 breathing blends, from pose `breath * 3 + sway` to the one a pixel higher. */
  readonly blends: readonly PoseBlend[];
  /** 49 eye sprites, index `gaze * 7 + lid`. */
  readonly eyes: SpriteSet;
  /** 71 mouth sprites: 0 the closed rest mouth, then 5 openness levels per viseme. */
  readonly mouths: SpriteSet;
  /** Where the mouth's opening shows, frame pixels. */
  readonly mouthRegion: Rect;
}

export const GAZES = [
  'center',
  'left',
  'right',
  'down',
  'center-raised',
  'left-raised',
  'right-raised',
] as const;
/** Visage's mouth shapes, in the atlas's order: the face stream's `viseme`, defined once. */
export const VISEMES = VISAGE_VISEMES;

const MAGIC = 'VSGATLAS';
/** Header JSON beyond this is not an atlas's (a real one is a few tens of kB). */
const MAX_HEADER_BYTES = 4 << 20;
/** A frame's side, px, at most (Visage's are 512). */
const MAX_SIDE = 4096;
/** Sprites are pasted up to this far from their rectangle (sway and breathing). */
const PASTE_REACH = BREATH_LEVELS;

export const i420Size = (w: number, h: number) => w * h + 2 * ((w + 1) >> 1) * ((h + 1) >> 1);

type Slot = [number, number];
interface SetLayout {
  rect: Rect;
  sprites: Slot[];
  lumaSpans: Slot;
  chromaSpans: Slot;
}
interface Layout {
  poses: Slot[];
  blends: { spans: Slot; delta: Slot }[];
  eyes: SetLayout;
  mouths: SetLayout;
  mouthRegion: Rect;
}

export interface DecodeAtlasOptions {
  /** The frame size (the `start` line's `width` and `height`); 512 x 512 by default. */
  width?: number;
  height?: number;
  /** Check the payload's SHA-256 against the header (needs `crypto.subtle`: secure contexts). */
  verify?: boolean;
}

/** Decodes an atlas file; the arrays are views into `file` (no copy). */
export async function decodeAtlas(
  file: ArrayBuffer,
  options: DecodeAtlasOptions = {},
): Promise<Atlas> {
  const width = options.width ?? 512;
  const height = options.height ?? 512;
  if (![width, height].every((v) => Number.isInteger(v) && v > 0 && v <= MAX_SIDE)) {
    throw new Error('atlas frame size out of range');
  }
  const bytes = new Uint8Array(file);
  if (bytes.byteLength < 12 || new TextDecoder().decode(bytes.subarray(0, 8)) !== MAGIC) {
    throw new Error('not a Visage atlas');
  }
  const jsonLength = new DataView(file).getUint32(8, true);
  if (jsonLength > MAX_HEADER_BYTES || 12 + jsonLength > bytes.byteLength) {
    throw new Error('atlas header truncated');
  }
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(12, 12 + jsonLength))) as {
    avatarId?: unknown;
    payloadBytes?: unknown;
    sha256?: unknown;
    layout?: Layout;
  };
  const start = Math.ceil((12 + jsonLength) / 8) * 8;
  const payloadBytes = bytes.byteLength - start;
  if (header.payloadBytes !== payloadBytes || !header.layout) {
    throw new Error('atlas payload truncated');
  }
  if (options.verify && globalThis.crypto?.subtle) {
    const digest = new Uint8Array(
      await crypto.subtle.digest('SHA-256', bytes.subarray(start) as Uint8Array<ArrayBuffer>),
    );
    const hex = Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
    if (hex !== header.sha256) throw new Error('atlas checksum mismatch');
  }
  const layout = header.layout;
  const view = <T>(
    make: new (buffer: ArrayBuffer, offset: number, length: number) => T,
    elementBytes: number,
    slot: Slot | undefined,
    expected?: number,
  ): T => {
    const [offset, count] = slot ?? [NaN, NaN];
    const ok =
      Number.isInteger(offset) &&
      Number.isInteger(count) &&
      offset >= 0 &&
      count >= 0 &&
      offset % 8 === 0 &&
      offset + count * elementBytes <= payloadBytes &&
      (expected === undefined || count === expected);
    if (!ok) throw new Error('atlas layout does not fit');
    return new make(file, start + offset, count);
  };
  const frameBytes = i420Size(width, height);
  if (layout.poses?.length !== 12 || layout.blends?.length !== 9) {
    throw new Error('atlas has another shape');
  }
  const poses = layout.poses.map((p) => view(Uint8Array, 1, p, frameBytes));
  const blends = layout.blends.map((b) => {
    const spans = view(Uint32Array, 4, b.spans);
    const delta = view(Int16Array, 2, b.delta);
    let total = 0;
    for (let s = 0; s < spans.length; s += 2) {
      const first = spans[s] as number;
      const length = spans[s + 1] ?? Infinity;
      if (first + length > frameBytes) throw new Error('atlas blend outside the frame');
      total += length;
    }
    if (total !== delta.length) throw new Error('atlas blend does not match its differences');
    return { spans, delta };
  });
  const set = (l: SetLayout | undefined, count: number): SpriteSet => {
    if (!l || !spriteRect(l.rect, width, height) || l.sprites?.length !== count) {
      throw new Error('atlas has another shape');
    }
    const { width: w, height: h } = l.rect;
    const lumaSpans = view(Int32Array, 4, l.lumaSpans);
    const chromaSpans = view(Int32Array, 4, l.chromaSpans);
    checkSpans(lumaSpans, w, h);
    checkSpans(chromaSpans, w >> 1, h >> 1);
    return {
      rect: l.rect,
      sprites: l.sprites.map((s) => view(Uint8Array, 1, s, i420Size(w, h))),
      lumaSpans,
      chromaSpans,
    };
  };
  const eyes = set(layout.eyes, GAZES.length * LID_LEVELS.length);
  const mouths = set(layout.mouths, 1 + (VISEMES.length - 1) * (MOUTH_LEVELS - 1));
  if (!inside(layout.mouthRegion, width, height, 0)) throw new Error('atlas has another shape');
  return {
    avatarId: typeof header.avatarId === 'string' ? header.avatarId : '',
    width,
    height,
    poses,
    blends,
    eyes,
    mouths,
    mouthRegion: layout.mouthRegion,
  };
}

/** Every (row, column, length) triple inside a w x h picture. */
function checkSpans(spans: Int32Array, w: number, h: number): void {
  if (spans.length % 3 !== 0) throw new Error('atlas spans malformed');
  for (let s = 0; s < spans.length; s += 3) {
    const row = spans[s] as number;
    const col = spans[s + 1] as number;
    const n = spans[s + 2] as number;
    if (row < 0 || row >= h || col < 0 || n < 0 || col + n > w) {
      throw new Error('atlas spans outside their sprite');
    }
  }
}

/** Even position and size (chroma lines up), inside the frame wherever it is pasted. */
function spriteRect(r: Rect | undefined, width: number, height: number): boolean {
  return (
    r !== undefined &&
    [r.x, r.y, r.width, r.height].every((v) => Number.isInteger(v) && v % 2 === 0) &&
    r.width > 0 &&
    r.height > 0 &&
    inside(r, width, height, PASTE_REACH)
  );
}

function inside(r: Rect | undefined, width: number, height: number, margin: number): boolean {
  return (
    r !== undefined &&
    [r.x, r.y, r.width, r.height].every(Number.isFinite) &&
    r.x >= margin &&
    r.y >= margin &&
    r.x + r.width <= width - margin &&
    r.y + r.height <= height - margin
  );
}
