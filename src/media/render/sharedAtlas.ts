// SPDX-License-Identifier: GPL-3.0-or-later
import type { Rect } from './faceGeometry.js';
import { avatarAtlas, installAvatarAtlas, type AvatarAtlas } from './spriteAtlas.js';
import type { SpriteSet } from './spriteSet.js';

/**
 * An avatar atlas packed into one SharedArrayBuffer, so worker threads can use the atlas the main
 * thread built instead of spending a second of CPU and ~7 MB each on their own copy. The object is
 * structured-cloneable: post it to a worker (the buffer is shared, not copied) and call
 * `adoptSharedAtlas` there before creating renderers.
 */
export interface SharedAvatarAtlas {
  readonly avatarId: string;
  readonly buffer: SharedArrayBuffer;
  readonly layout: AtlasLayout;
  readonly buildMs: number;
}

/** Where each array of the atlas sits in the buffer: [byte offset, element count]. */
export interface AtlasLayout {
  readonly poses: [number, number][];
  readonly blends: { spans: [number, number]; delta: [number, number] }[];
  readonly eyes: SpriteSetLayout;
  readonly mouths: SpriteSetLayout;
  readonly mouthRegion: Rect;
}

export interface SpriteSetLayout {
  readonly rect: Rect;
  readonly sprites: [number, number][];
  readonly lumaSpans: [number, number];
  readonly chromaSpans: [number, number];
}

type Packable = Uint8Array | Uint32Array | Int16Array | Int32Array;

const shared = new Map<string, SharedAvatarAtlas>();

/** The atlas of `avatarId` (built here if needed) in shared memory; packed once per avatar. */
export function shareAvatarAtlas(avatarId: string): SharedAvatarAtlas {
  const cached = shared.get(avatarId);
  if (cached) return cached;
  const result = packAtlas(avatarAtlas(avatarId));
  shared.set(avatarId, result);
  installAvatarAtlas(unpackAtlas(result)); // this thread also reads the shared copy from now on
  return result;
}

/**
 * Copies an atlas into one SharedArrayBuffer (every array 8-byte aligned) with the layout that
 * finds its parts again: what worker threads share, and what an atlas file stores.
 */
export function packAtlas(atlas: AvatarAtlas): SharedAvatarAtlas {
  const arrays: Packable[] = [];
  const slot = (a: Packable): [number, number] => {
    arrays.push(a);
    return [arrays.length - 1, a.length];
  };
  const setLayout = (set: SpriteSet): SpriteSetLayout => ({
    rect: set.rect,
    sprites: set.sprites.map(slot),
    lumaSpans: slot(set.lumaSpans),
    chromaSpans: slot(set.chromaSpans),
  });
  const layout: AtlasLayout = {
    poses: atlas.poses.map(slot),
    blends: atlas.blends.map((b) => ({ spans: slot(b.spans), delta: slot(b.delta) })),
    eyes: setLayout(atlas.eyes),
    mouths: setLayout(atlas.mouths),
    mouthRegion: atlas.mouthRegion,
  };
  // Replace array numbers by byte offsets, 8-byte aligned for every element type.
  const offsets: number[] = [];
  let size = 0;
  for (const a of arrays) {
    offsets.push(size);
    size += Math.ceil(a.byteLength / 8) * 8;
  }
  const buffer = new SharedArrayBuffer(size);
  arrays.forEach((a, i) => {
    new Uint8Array(buffer, offsets[i], a.byteLength).set(
      new Uint8Array(a.buffer, a.byteOffset, a.byteLength),
    );
  });
  const place = ([i, n]: [number, number]): [number, number] => [offsets[i] as number, n];
  const placeSet = (l: SpriteSetLayout): SpriteSetLayout => ({
    rect: l.rect,
    sprites: l.sprites.map(place),
    lumaSpans: place(l.lumaSpans),
    chromaSpans: place(l.chromaSpans),
  });
  return {
    avatarId: atlas.avatarId,
    buffer,
    buildMs: atlas.buildMs,
    layout: {
      poses: layout.poses.map(place),
      blends: layout.blends.map((b) => ({ spans: place(b.spans), delta: place(b.delta) })),
      eyes: placeSet(layout.eyes),
      mouths: placeSet(layout.mouths),
      mouthRegion: layout.mouthRegion,
    },
  };
}

/** Use an atlas shared by another thread for all renderers of its avatar in this thread. */
export function adoptSharedAtlas(atlas: SharedAvatarAtlas): void {
  shared.set(atlas.avatarId, atlas); // sharing it on from here needs no second copy
  installAvatarAtlas(unpackAtlas(atlas));
}

/** The atlas whose arrays are views into the packed buffer (no copy). */
export function unpackAtlas({ avatarId, buffer, layout, buildMs }: SharedAvatarAtlas): AvatarAtlas {
  const u8 = ([o, n]: [number, number]): Uint8Array => new Uint8Array(buffer, o, n);
  const set = (l: SpriteSetLayout): SpriteSet => ({
    rect: l.rect,
    sprites: l.sprites.map(u8),
    lumaSpans: new Int32Array(buffer, l.lumaSpans[0], l.lumaSpans[1]),
    chromaSpans: new Int32Array(buffer, l.chromaSpans[0], l.chromaSpans[1]),
  });
  return {
    avatarId,
    poses: layout.poses.map(u8),
    blends: layout.blends.map((b) => ({
      spans: new Uint32Array(buffer, b.spans[0], b.spans[1]),
      delta: new Int16Array(buffer, b.delta[0], b.delta[1]),
    })),
    eyes: set(layout.eyes),
    mouths: set(layout.mouths),
    mouthRegion: layout.mouthRegion,
    buildMs,
    bytes: buffer.byteLength,
  };
}
