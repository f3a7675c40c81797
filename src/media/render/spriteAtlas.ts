// SPDX-License-Identifier: GPL-3.0-or-later
import {
  BLEND_SHIFT,
  BLEND_STEPS,
  BREATH_LEVELS,
  LID_LEVELS,
  MOUTH_LEVELS,
  mouthSpriteIndex,
  SWAY_OFFSETS,
  type PoseBlend,
} from '@visage-avatar/web/composition';
import { VISEMES } from '../lipsync/viseme.js';
import { drawEyes, type EyeState } from './drawEyes.js';
import { drawBackground, drawBody, drawHeadBase, drawHeadFront } from './drawFigure.js';
import { drawHairBack } from './drawHair.js';
import { drawMouth } from './drawMouth.js';
import { avatarDesign } from './avatarDesigns.js';
import type { FaceDesign } from './faceDesign.js';
import { EYE_RECT, FRAME_HEIGHT, FRAME_WIDTH, MOUTH_RECT, type Rect } from './faceGeometry.js';
import { rasterToI420 } from './i420.js';
import { mouthShape } from './mouthShape.js';
import { Raster } from './raster.js';
import { spriteSet, type SpriteSet } from './spriteSet.js';

// The atlas's layout (breathing levels, sway offsets, lid and mouth levels, blend steps) is the
// browser's too: defined once with the composition (@visage-avatar/web/composition).
export {
  BLEND_SHIFT,
  BLEND_STEPS,
  BREATH_LEVELS,
  LID_LEVELS,
  MOUTH_LEVELS,
  mouthSpriteIndex,
  SWAY_OFFSETS,
  type PoseBlend,
};

/**
 * Gaze directions drawn for the eye sprites; `down` is the parked look, the `-raised` ones lift the
 * brows (emphasis while speaking).
 */
export const GAZES = [
  { name: 'center', x: 0, y: 0, browDrop: 0 },
  { name: 'left', x: -1, y: 0.1, browDrop: 0 },
  { name: 'right', x: 1, y: 0.1, browDrop: 0 },
  { name: 'down', x: 0.15, y: 1, browDrop: 2.5 },
  { name: 'center-raised', x: 0, y: -0.1, browDrop: -3.5 },
  { name: 'left-raised', x: -1, y: 0, browDrop: -3.5 },
  { name: 'right-raised', x: 1, y: 0, browDrop: -3.5 },
] as const;
export type GazeName = (typeof GAZES)[number]['name'];
/** Rows per step when a whole-frame layer is drawn (keeps each build step short). */
const LAYER_STRIP_ROWS = 64;
/** The shoulders sit this much higher than `drawBody` draws them (a shorter neck). */
const BODY_LIFT = 12;
/** Pixel changes smaller than this between neighbouring breath frames are not blended. */
const BLEND_MIN_DELTA = 3;

/**
 * Everything one avatar's frames are pasted from, all in I420: whole frames for each breath and
 * sway offset, the pixel differences between neighbouring breath frames, and eye and mouth
 * sprites. Built once per avatar per process and shared by every session that shows it.
 */
export interface AvatarAtlas {
  readonly avatarId: string;
  /** poses[breath * SWAY_OFFSETS.length + sway] is a whole 512x512 I420 frame. */
  readonly poses: readonly Uint8Array[];
  /** blends[breath * SWAY_OFFSETS.length + sway]: from breath level b to b + 1. */
  readonly blends: readonly PoseBlend[];
  /** Eye sprites (EYE_RECT), index gaze * LID_LEVELS.length + lid. */
  readonly eyes: SpriteSet;
  /** Mouth sprites (MOUTH_RECT), index from `mouthSpriteIndex`. */
  readonly mouths: SpriteSet;
  /**
   * Where the mouth's opening shows, in frame pixels (for `measureMouthOpening`): MOUTH_RECT
   * for the catalogue avatars, the lips and their reach for a photo.
   */
  readonly mouthRegion: Rect;
  readonly buildMs: number;
  readonly bytes: number;
}

const atlases = new Map<string, AvatarAtlas>();

/** Builds in progress, as step generators: a sync caller finishes what an async one started. */
const building = new Map<string, Generator<void, AvatarAtlas>>();

/** The atlas of an avatar, built on first use (about a second) and cached for the process. */
export function avatarAtlas(avatarId: string): AvatarAtlas {
  const cached = atlases.get(avatarId);
  if (cached) return cached;
  const steps = building.get(avatarId) ?? buildAtlas(avatarId, avatarDesign(avatarId));
  building.set(avatarId, steps);
  for (;;) {
    const step = steps.next();
    if (step.done) return finished(avatarId, step.value);
  }
}

/**
 * The same, built in small steps (tens of ms at most) that yield to the event loop, so a
 * server can start the build at startup and keep answering while it runs.
 */
export async function avatarAtlasAsync(avatarId: string): Promise<AvatarAtlas> {
  const cached = atlases.get(avatarId);
  if (cached) return cached;
  const steps = building.get(avatarId) ?? buildAtlas(avatarId, avatarDesign(avatarId));
  building.set(avatarId, steps);
  for (;;) {
    await new Promise<void>((resolve) => setImmediate(resolve));
    // Another caller may have finished it meanwhile.
    const done = atlases.get(avatarId);
    if (done) return done;
    const step = steps.next();
    if (step.done) return finished(avatarId, step.value);
  }
}

function finished(avatarId: string, atlas: AvatarAtlas): AvatarAtlas {
  building.delete(avatarId);
  atlases.set(avatarId, atlas);
  return atlas;
}

/** Makes `atlas` the one this thread uses for its avatar (e.g. one shared by another thread). */
export function installAvatarAtlas(atlas: AvatarAtlas): void {
  building.delete(atlas.avatarId); // a build in progress is no longer needed
  atlases.set(atlas.avatarId, atlas);
}

/**
 * Draws the atlas, yielding between steps (layers, frames, sprites). `buildMs` is the time spent
 * in the steps, not the wall time between them.
 */
function* buildAtlas(avatarId: string, d: FaceDesign): Generator<void, AvatarAtlas> {
  let buildMs = 0;
  let stepStart = performance.now();
  // Ends a step: counts its time, hands control back, restarts the clock when resumed.
  function* pause(): Generator<void, void> {
    buildMs += performance.now() - stepStart;
    yield;
    stepStart = performance.now();
  }
  const full = (): Raster => new Raster(0, 0, FRAME_WIDTH, FRAME_HEIGHT);
  // A whole-frame layer is drawn in horizontal strips, one step each, then joined.
  function* layer(draw: (r: Raster) => void, height = FRAME_HEIGHT): Generator<void, Raster> {
    const out = new Raster(0, 0, FRAME_WIDTH, height);
    for (let y = 0; y < height; y += LAYER_STRIP_ROWS) {
      const strip = new Raster(0, y, FRAME_WIDTH, Math.min(LAYER_STRIP_ROWS, height - y));
      draw(strip);
      strip.drawOnto(out);
      yield* pause();
    }
    return out;
  }
  const background = yield* layer((r) => drawBackground(r, d));
  const hairBack = yield* layer((r) => drawHairBack(r, d));
  // The body is drawn taller than the frame, so that lifting it (breathing, and BODY_LIFT) never
  // uncovers the frame's bottom rows.
  const body = yield* layer((r) => drawBody(r, d), FRAME_HEIGHT + BODY_LIFT + BREATH_LEVELS + 2);
  const headBase = yield* layer((r) => drawHeadBase(r, d));
  // Hair in front of the face and glasses: drawn once, laid over the base head and every sprite.
  const front = yield* layer((r) => drawHeadFront(r, d));
  const head = full();
  headBase.drawOnto(head);
  drawEyes(head, d, { lid: 0, gazeX: 0, gazeY: 0, browDrop: 0 });
  drawMouth(head, d, mouthShape('rest', 0));
  front.drawOnto(head);
  yield* pause();

  const poses: Uint8Array[] = [];
  for (let b = 0; b < BREATH_LEVELS; b++) {
    for (const sway of SWAY_OFFSETS) {
      const frame = background.clone();
      hairBack.drawOnto(frame, sway, -b);
      body.drawOnto(frame, 0, -b - BODY_LIFT);
      head.drawOnto(frame, sway, -b);
      poses.push(rasterToI420(frame).data);
      yield* pause();
    }
  }
  const blends: PoseBlend[] = [];
  for (let i = 0; i + SWAY_OFFSETS.length < poses.length; i++) {
    blends.push(poseBlend(poses[i] as Uint8Array, poses[i + SWAY_OFFSETS.length] as Uint8Array));
    yield* pause();
  }

  const sprite = (rect: Rect, draw: (r: Raster) => void): Uint8Array => {
    const r = headBase.crop(rect.x, rect.y, rect.width, rect.height);
    draw(r);
    front.drawOnto(r);
    assertOpaque(r, avatarId);
    return rasterToI420(r).data;
  };
  const eyes: Uint8Array[] = [];
  for (const gaze of GAZES) {
    for (const lid of LID_LEVELS) {
      const state: EyeState = { lid, gazeX: gaze.x, gazeY: gaze.y, browDrop: gaze.browDrop };
      eyes.push(sprite(EYE_RECT, (r) => drawEyes(r, d, state)));
      yield* pause();
    }
  }
  const mouths: Uint8Array[] = [sprite(MOUTH_RECT, (r) => drawMouth(r, d, mouthShape('rest', 0)))];
  for (let v = 1; v < VISEMES.length; v++) {
    for (let level = 1; level < MOUTH_LEVELS; level++) {
      const shape = mouthShape(VISEMES[v] ?? 'rest', level / (MOUTH_LEVELS - 1));
      mouths.push(sprite(MOUTH_RECT, (r) => drawMouth(r, d, shape)));
      yield* pause();
    }
  }
  // Level indices for viseme 0 (rest) are never used: mouthSpriteIndex maps them to 0.
  const bytes =
    [...poses, ...eyes, ...mouths].reduce((n, a) => n + a.byteLength, 0) +
    blends.reduce((n, b) => n + b.spans.byteLength + b.delta.byteLength, 0);
  const eyeSet = spriteSet(EYE_RECT, eyes);
  yield* pause();
  const mouthSet = spriteSet(MOUTH_RECT, mouths);
  buildMs += performance.now() - stepStart;
  return {
    avatarId,
    poses,
    blends,
    eyes: eyeSet,
    mouths: mouthSet,
    mouthRegion: MOUTH_RECT,
    buildMs,
    bytes,
  };
}

/** Runs this close together are joined (their few small differences come along). */
const BLEND_JOIN_GAP = 4;

/**
 * The pixels that differ between neighbouring breath frames (see BLEND_MIN_DELTA), in the luma
 * plane only: colour moves in whole pixels (a half-pixel step of chroma does not show), which
 * saves a third of the work per frame.
 */
export function poseBlend(
  a: Uint8Array,
  b: Uint8Array,
  { minDelta = BLEND_MIN_DELTA, joinGap = BLEND_JOIN_GAP } = {},
): PoseBlend {
  const luma = FRAME_WIDTH * FRAME_HEIGHT;
  // Written into arrays of the most they can hold, then cut (a frame's worth of JavaScript
  // numbers pushed one by one took 4 % of a photo build in these blends). At most luma + 1
  // entries: spans are a pixel long at least and a pixel apart at least.
  const spans = new Uint32Array(luma + 1);
  const delta = new Int16Array(luma);
  let spanCount = 0;
  let deltaCount = 0;
  let start = -1;
  let lastHit = -Infinity;
  const close = (end: number) => {
    spans[spanCount++] = start;
    spans[spanCount++] = end - start;
    for (let i = start; i < end; i++) delta[deltaCount++] = (b[i] as number) - (a[i] as number);
    start = -1;
  };
  for (let i = 0; i < luma; i++) {
    const dv = (b[i] as number) - (a[i] as number);
    if (dv < minDelta && dv > -minDelta) continue;
    if (start >= 0 && i - lastHit > joinGap) close(lastHit + 1);
    if (start < 0) start = i;
    lastHit = i;
  }
  if (start >= 0) close(lastHit + 1);
  return { spans: spans.slice(0, spanCount), delta: delta.slice(0, deltaCount) };
}

/** A sprite must lie entirely on the head, or pasting it would smear background over the face. */
function assertOpaque(r: Raster, avatarId: string): void {
  for (let k = 3; k < r.data.length; k += 4) {
    if ((r.data[k] as number) < 0.999) {
      const p = (k - 3) / 4;
      throw new Error(
        `sprite of ${avatarId} is not opaque at (${r.x0 + (p % r.width)}, ${r.y0 + Math.floor(p / r.width)})`,
      );
    }
  }
}
