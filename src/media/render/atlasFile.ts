// SPDX-License-Identifier: GPL-3.0-or-later
import { createHash } from 'node:crypto';
import { VISEMES } from '../lipsync/viseme.js';
import { FRAME_HEIGHT, FRAME_WIDTH, type Rect } from './faceGeometry.js';
import { i420Size } from './i420.js';
import type { AtlasLayout, SharedAvatarAtlas, SpriteSetLayout } from './sharedAtlas.js';
import { BREATH_LEVELS, GAZES, LID_LEVELS, MOUTH_LEVELS, SWAY_OFFSETS } from './spriteAtlas.js';

/**
 * An atlas as bytes: `VSGATLAS`, a little-endian u32 header length, a JSON header, padding to
 * 8 bytes, then the packed atlas (see `packAtlas`). The header carries the layout and the
 * payload's SHA-256; decoding checks both, and that the layout is an atlas this code renders
 * (every part inside the payload, the standard sprite counts, rectangles inside the frame), so
 * a damaged or foreign file is refused instead of rendered.
 */
const MAGIC = Buffer.from('VSGATLAS', 'ascii');

/** What every atlas file's header holds; writers add their own fields. */
export interface AtlasFileHeader {
  format: string;
  avatarId: string;
  buildMs: number;
  payloadBytes: number;
  sha256: string;
  layout: AtlasLayout;
}

export function encodeAtlasFile(
  shared: SharedAvatarAtlas,
  header: { format: string } & Record<string, unknown>,
): Buffer {
  const payload = new Uint8Array(shared.buffer);
  const full: AtlasFileHeader & Record<string, unknown> = {
    ...header,
    avatarId: shared.avatarId,
    buildMs: shared.buildMs,
    payloadBytes: payload.byteLength,
    sha256: createHash('sha256').update(payload).digest('hex'),
    layout: shared.layout,
  };
  const json = Buffer.from(JSON.stringify(full), 'utf8');
  const length = Buffer.alloc(4);
  length.writeUInt32LE(json.byteLength);
  const headerBytes = MAGIC.byteLength + 4 + json.byteLength;
  const padding = Buffer.alloc((8 - (headerBytes % 8)) % 8);
  return Buffer.concat([MAGIC, length, json, padding, payload]);
}

/** The header alone (cheap: no checksum), to decide whether the file is worth decoding. */
export function readAtlasFileHeader(file: Uint8Array): AtlasFileHeader & Record<string, unknown> {
  const bytes = Buffer.from(file.buffer, file.byteOffset, file.byteLength);
  if (
    bytes.byteLength < MAGIC.byteLength + 4 ||
    !bytes.subarray(0, MAGIC.byteLength).equals(MAGIC)
  ) {
    throw new Error('not an atlas file');
  }
  const jsonLength = bytes.readUInt32LE(MAGIC.byteLength);
  const jsonEnd = MAGIC.byteLength + 4 + jsonLength;
  if (jsonEnd > bytes.byteLength) throw new Error('truncated header');
  return JSON.parse(bytes.subarray(MAGIC.byteLength + 4, jsonEnd).toString('utf8')) as never;
}

/**
 * The atlas in `file`, in a new SharedArrayBuffer, after checking its checksum and layout.
 * `expected` pins fields of the header (format, key, avatar id) that must match.
 */
export function decodeAtlasFile(
  file: Uint8Array,
  expected: Record<string, string>,
): { shared: SharedAvatarAtlas; header: AtlasFileHeader & Record<string, unknown> } {
  const header = readAtlasFileHeader(file);
  for (const [name, value] of Object.entries(expected)) {
    if (header[name] !== value) throw new Error('header does not match');
  }
  const bytes = Buffer.from(file.buffer, file.byteOffset, file.byteLength);
  const jsonEnd = MAGIC.byteLength + 4 + bytes.readUInt32LE(MAGIC.byteLength);
  const start = jsonEnd + ((8 - (jsonEnd % 8)) % 8);
  if (bytes.byteLength - start !== header.payloadBytes) throw new Error('truncated payload');
  const payload = bytes.subarray(start);
  if (createHash('sha256').update(payload).digest('hex') !== header.sha256) {
    throw new Error('checksum mismatch');
  }
  checkAtlasLayout(header.layout, header.payloadBytes);
  const buffer = new SharedArrayBuffer(header.payloadBytes);
  new Uint8Array(buffer).set(payload);
  checkBlendSpans(header.layout, buffer);
  return {
    shared: { avatarId: header.avatarId, buffer, layout: header.layout, buildMs: header.buildMs },
    header,
  };
}

/** Sprites are pasted up to this far from their rectangle (head sway and breathing). */
const PASTE_REACH = Math.max(BREATH_LEVELS, ...SWAY_OFFSETS.map(Math.abs)) + 1;

/**
 * The layout must describe an atlas of the standard shape, inside the buffer, aligned, with
 * sprite rectangles that stay inside the frame wherever they are pasted.
 */
export function checkAtlasLayout(layout: AtlasLayout, bytes: number): void {
  const slot = ([offset, count]: [number, number], elementBytes: number, expected?: number) => {
    const ok =
      Number.isInteger(offset) &&
      Number.isInteger(count) &&
      offset >= 0 &&
      count >= 0 &&
      offset % elementBytes === 0 &&
      offset + count * elementBytes <= bytes &&
      (expected === undefined || count === expected);
    if (!ok) throw new Error('layout does not fit');
  };
  const poses = BREATH_LEVELS * SWAY_OFFSETS.length;
  if (layout.poses.length !== poses || layout.blends.length !== poses - SWAY_OFFSETS.length) {
    throw new Error('layout has another shape');
  }
  for (const p of layout.poses) slot(p, 1, i420Size(FRAME_WIDTH, FRAME_HEIGHT));
  for (const b of layout.blends) {
    slot(b.spans, 4);
    slot(b.delta, 2);
    if (b.spans[1] % 2 !== 0) throw new Error('layout does not fit');
  }
  const sprites = (set: SpriteSetLayout, count: number) => {
    if (!isSpriteRect(set.rect) || set.sprites.length !== count) {
      throw new Error('layout has another shape');
    }
    for (const s of set.sprites) slot(s, 1, i420Size(set.rect.width, set.rect.height));
    slot(set.lumaSpans, 4);
    slot(set.chromaSpans, 4);
  };
  sprites(layout.eyes, GAZES.length * LID_LEVELS.length);
  sprites(layout.mouths, 1 + (VISEMES.length - 1) * (MOUTH_LEVELS - 1));
  if (!insideFrame(layout.mouthRegion, 0)) throw new Error('layout has another shape');
}

/** Every blend run lies inside the frame, and the runs account for exactly their differences. */
function checkBlendSpans(layout: AtlasLayout, buffer: SharedArrayBuffer): void {
  const frameBytes = i420Size(FRAME_WIDTH, FRAME_HEIGHT);
  for (const b of layout.blends) {
    const spans = new Uint32Array(buffer, b.spans[0], b.spans[1]);
    let total = 0;
    for (let s = 0; s < spans.length; s += 2) {
      const start = spans[s] as number;
      const length = spans[s + 1] as number;
      if (start + length > frameBytes) throw new Error('a blend reaches outside the frame');
      total += length;
    }
    if (total !== b.delta[1]) throw new Error('a blend does not match its differences');
  }
}

/** Even position and size (chroma lines up), and inside the frame wherever it is pasted. */
export function isSpriteRect(r: Rect): boolean {
  return (
    [r.x, r.y, r.width, r.height].every((v) => Number.isInteger(v) && v % 2 === 0) &&
    r.width > 0 &&
    r.height > 0 &&
    insideFrame(r, PASTE_REACH)
  );
}

function insideFrame(r: Rect, margin: number): boolean {
  return (
    [r.x, r.y, r.width, r.height].every(Number.isFinite) &&
    r.x >= margin &&
    r.y >= margin &&
    r.x + r.width <= FRAME_WIDTH - margin &&
    r.y + r.height <= FRAME_HEIGHT - margin
  );
}
