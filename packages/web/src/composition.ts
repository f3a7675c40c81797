// SPDX-License-Identifier: Apache-2.0
/**
 * How a Visage frame is made from its atlas, written once for the server's renderer and the
 * browser's (the `@visage-avatar/web/composition` entry, which needs no browser): the atlas's
 * layout (breathing levels, sway offsets, lid levels, mouth levels) and the composition itself:
 * copy the pose, add the breathing blend for a fractional lift, paste the eye sprite, then the
 * mouth sprite, both moved with the head. Everything here is plain arrays: no allocation per
 * frame.
 */

/** Breathing lifts the head by whole pixels 0..BREATH_LEVELS-1, blended in between. */
export const BREATH_LEVELS = 4;
/** Head sway, px. */
export const SWAY_OFFSETS = [-1, 0, 1] as const;
/** Upper-lid levels of the eye sprites, 0 open .. 1 closed. */
export const LID_LEVELS = [0, 0.2, 0.4, 0.55, 0.7, 0.85, 1] as const;
/** Openness levels per mouth shape (0 is the closed rest mouth). */
export const MOUTH_LEVELS = 6;
/** Breathing blends in 1/BLEND_STEPS steps (the atlas's delta scale). */
export const BLEND_SHIFT = 5;
export const BLEND_STEPS = 1 << BLEND_SHIFT;

/** A rectangle in frame pixels. */
export interface Rect {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

/** Sprites of one rectangle: I420 pictures of its size, and which of their pixels to paste. */
export interface SpriteSet {
  readonly rect: Rect;
  readonly sprites: readonly Uint8Array[];
  /** (row, first column, length) triples, sprite coordinates. */
  readonly lumaSpans: Int32Array;
  /** The same in chroma samples. */
  readonly chromaSpans: Int32Array;
}

/**
 * Pixels that differ between two neighbouring breath frames, for sub-pixel motion: runs of
 * consecutive bytes of the I420 frame as (first byte, length) pairs, and the differences of all
 * runs' bytes one after another (a run-wise loop is several times faster than one index per
 * pixel on a photo, where most of the moving head differs).
 */
export interface PoseBlend {
  readonly spans: Uint32Array;
  readonly delta: Int16Array;
}

/** What composeFrame reads of an atlas (the server's and the browser's both have it). */
export interface ComposableAtlas {
  /** Whole I420 frames, index `breath * SWAY_OFFSETS.length + sway`. */
  readonly poses: readonly Uint8Array[];
  /** From pose `breath * SWAY_OFFSETS.length + sway` to the one a pixel higher. */
  readonly blends: readonly (PoseBlend | undefined)[];
  readonly eyes: SpriteSet;
  readonly mouths: SpriteSet;
}

/** The atlas parts a frame takes: pose index, blend step, sprite indices, the paste offset. */
export interface FrameParts {
  pose: number;
  step: number;
  eye: number;
  mouth: number;
  dx: number;
  dy: number;
}

/** A breathing lift (px, fractional) as a whole level and a blend step towards the next. */
export function liftSteps(lift: number): { level: number; step: number } {
  let level = Math.floor(lift);
  let step = Math.round((lift - level) * BLEND_STEPS);
  if (step === BLEND_STEPS) {
    level++;
    step = 0;
  }
  if (level >= BREATH_LEVELS - 1) {
    level = BREATH_LEVELS - 1;
    step = 0;
  }
  return { level, step };
}

/** The parts for a breath level and step, a sway index and the eye and mouth sprites. */
export function frameParts(
  level: number,
  step: number,
  sway: number,
  eye: number,
  mouth: number,
): FrameParts {
  return {
    pose: level * SWAY_OFFSETS.length + sway,
    step,
    eye,
    mouth,
    // The face moves with the head: sway sideways, breathing upwards.
    dx: SWAY_OFFSETS[sway] ?? 0,
    dy: -(level + (step * 2 >= BLEND_STEPS ? 1 : 0)),
  };
}

/** The nearest lid level's index. */
export function nearestLid(lid: number): number {
  let best = 0;
  for (let i = 1; i < LID_LEVELS.length; i++) {
    if (Math.abs((LID_LEVELS[i] as number) - lid) < Math.abs((LID_LEVELS[best] as number) - lid)) {
      best = i;
    }
  }
  return best;
}

/** An openness 0..1 as a mouth level 0..MOUTH_LEVELS-1. */
export function mouthLevel(openness: number): number {
  const open = Math.min(1, Math.max(0, Number.isFinite(openness) ? openness : 0));
  return Math.round(open * (MOUTH_LEVELS - 1));
}

/** Sprite 0 is the closed rest mouth; then MOUTH_LEVELS-1 openness levels per other shape. */
export function mouthSpriteIndex(viseme: number, level: number): number {
  if (viseme === 0 || level <= 0) return 0;
  return 1 + (viseme - 1) * (MOUTH_LEVELS - 1) + (level - 1);
}

/** The frame of `parts` into `out`, an I420 frame of `width` x `height`. */
export function composeFrame(
  atlas: ComposableAtlas,
  out: Uint8Array,
  width: number,
  height: number,
  parts: FrameParts,
): void {
  out.set(atlas.poses[parts.pose] as Uint8Array);
  if (parts.step > 0) applyBlend(out, atlas.blends[parts.pose], parts.step);
  pasteSprite(out, width, height, atlas.eyes, parts.eye, parts.dx, parts.dy);
  pasteSprite(out, width, height, atlas.mouths, parts.mouth, parts.dx, parts.dy);
}

function applyBlend(out: Uint8Array, blend: PoseBlend | undefined, step: number): void {
  if (!blend) return;
  const { spans, delta } = blend;
  const half = BLEND_STEPS >> 1;
  let d = 0;
  for (let s = 0; s < spans.length; s += 2) {
    const start = spans[s] as number;
    const end = start + (spans[s + 1] as number);
    for (let k = start; k < end; k++, d++) {
      out[k] = (out[k] as number) + (((delta[d] as number) * step + half) >> BLEND_SHIFT);
    }
  }
}

/**
 * Copies the varying pixels of sprite `index` into the frame at the set's rectangle moved by
 * (dx, dy). Chroma goes to the nearest chroma position: an odd offset shifts colour by half a
 * chroma sample, which does not show on a face.
 */
export function pasteSprite(
  out: Uint8Array,
  W: number,
  H: number,
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
    const dst = (y + j) * W + x + i0;
    for (let i = 0; i < n; i++) out[dst + i] = sprite[src + i] as number;
  }
  const cw = w >> 1;
  const uSrc = w * h;
  const vSrc = uSrc + cw * (h >> 1);
  const CW = (W + 1) >> 1;
  const uOut = W * H;
  const vOut = uOut + CW * ((H + 1) >> 1);
  const cx = x >> 1;
  const cy = y >> 1;
  const chroma = set.chromaSpans;
  for (let s = 0; s < chroma.length; s += 3) {
    const j = chroma[s] as number;
    const i0 = chroma[s + 1] as number;
    const n = chroma[s + 2] as number;
    const src = j * cw + i0;
    const dst = (cy + j) * CW + cx + i0;
    for (let i = 0; i < n; i++) {
      out[uOut + dst + i] = sprite[uSrc + src + i] as number;
      out[vOut + dst + i] = sprite[vSrc + src + i] as number;
    }
  }
}
