import { visemeIndex, type MouthPose } from '../lipsync/viseme.js';
import { EYE_RECT, FRAME_HEIGHT, FRAME_WIDTH, MOUTH_RECT, type Rect } from './faceGeometry.js';
import { i420Size } from './i420.js';
import { IdleMotion } from './idleMotion.js';
import { pasteSprite } from './spriteSet.js';
import {
  avatarAtlas,
  avatarAtlasAsync,
  BLEND_SHIFT,
  BLEND_STEPS,
  BREATH_LEVELS,
  LID_LEVELS,
  MOUTH_LEVELS,
  mouthSpriteIndex,
  SWAY_OFFSETS,
  type AvatarAtlas,
} from './spriteAtlas.js';

export interface FaceRenderInput {
  /**
   * The frame's time on the playout clock, ms. Drives blinks and breathing, so it must keep
   * advancing in real time during silence too (an audio position that stops while nothing plays
   * would freeze the idle life).
   */
  readonly timeMs: number;
  readonly mouth: MouthPose;
  /** The waiting look: lids half down, eyes lowered, slower breathing. */
  readonly parked: boolean;
}

export interface FaceRenderer {
  readonly avatarId: string;
  readonly width: number;
  readonly height: number;
  /** Where the mouth is drawn (for measuring it in decoded frames, see measureMouthOpening). */
  readonly mouthRegion: Rect;
  /** Where the eyes and brows are drawn. */
  readonly eyeRegion: Rect;
  /** Frame rates worth sending: full rate while active, a low one while parked to save CPU. */
  readonly recommendedFps: { readonly active: number; readonly parked: number };
  /**
   * Renders the frame for `input` into the renderer's one I420 buffer and returns it (Y plane,
   * then U, then V; `VideoBufferType.I420`). The buffer is reused: the contents are valid until
   * the next call, so hand it to `VideoSource.captureFrame` (which copies) before rendering again.
   * No allocation per frame. Consecutive frames always differ somewhere.
   */
  renderFrame(input: FaceRenderInput): Uint8Array;
}

export interface FaceRendererOptions {
  /** Seed of the idle animation's random choices (blink intervals, gaze, sway). */
  readonly seed?: number;
}

export const RECOMMENDED_FPS = Object.freeze({ active: 25, parked: 5 });

/**
 * A renderer for a catalogue avatar. The avatar's sprite atlas is built on first use in the
 * process (see `prepareAvatar` to do that at startup) and shared by every renderer of it.
 */
export function createFaceRenderer(
  avatarId: string,
  options: FaceRendererOptions = {},
): FaceRenderer {
  return new AtlasFaceRenderer(
    avatarAtlas(avatarId),
    options.seed ?? Math.floor(Math.random() * 2 ** 32),
  );
}

/** Builds an avatar's atlas now (about a second), so the first session does not wait for it. */
export function prepareAvatar(avatarId: string): { buildMs: number; bytes: number } {
  const atlas = avatarAtlas(avatarId);
  return { buildMs: atlas.buildMs, bytes: atlas.bytes };
}

/**
 * `prepareAvatar` without blocking: the build runs in short steps between other work on the
 * event loop. A `createFaceRenderer` call meanwhile finishes the build synchronously.
 */
export async function prepareAvatarAsync(
  avatarId: string,
): Promise<{ buildMs: number; bytes: number }> {
  const atlas = await avatarAtlasAsync(avatarId);
  return { buildMs: atlas.buildMs, bytes: atlas.bytes };
}

class AtlasFaceRenderer implements FaceRenderer {
  readonly width = FRAME_WIDTH;
  readonly height = FRAME_HEIGHT;
  readonly mouthRegion = MOUTH_RECT;
  readonly eyeRegion = EYE_RECT;
  readonly recommendedFps = RECOMMENDED_FPS;
  readonly avatarId: string;
  // Its own ArrayBuffer at offset 0: rtc-node's VideoFrame passes `data.buffer` to native code.
  private readonly frame = new Uint8Array(i420Size(FRAME_WIDTH, FRAME_HEIGHT));
  private readonly motion: IdleMotion;
  private lastKey = -1;

  constructor(
    private readonly atlas: AvatarAtlas,
    seed: number,
  ) {
    this.avatarId = atlas.avatarId;
    this.motion = new IdleMotion(seed);
  }

  renderFrame(input: FaceRenderInput): Uint8Array {
    if (!Number.isFinite(input.timeMs))
      throw new RangeError(`timeMs must be finite, got ${input.timeMs}`);
    const idle = this.motion.update(input.timeMs, input.parked, input.mouth.openness > 0.05);

    // Breathing between two whole-pixel frames, as a blend weight in 1/BLEND_STEPS.
    let level = Math.floor(idle.breath);
    let step = Math.round((idle.breath - level) * BLEND_STEPS);
    if (step === BLEND_STEPS) {
      level++;
      step = 0;
    }
    if (level >= BREATH_LEVELS - 1) {
      level = BREATH_LEVELS - 1;
      step = 0;
    }
    const eye = idle.gaze * LID_LEVELS.length + nearestLid(idle.lid);
    const mouthLevel = Math.round(
      Math.min(1, Math.max(0, input.mouth.openness)) * (MOUTH_LEVELS - 1),
    );
    const mouth = mouthSpriteIndex(visemeIndex(input.mouth.viseme), mouthLevel);

    // Never a frozen frame: if nothing moved since the last frame, breathe one step on.
    const key = (((level * BLEND_STEPS + step) * 3 + idle.sway) * 64 + eye) * 128 + mouth;
    if (key === this.lastKey) {
      if (step < BLEND_STEPS - 1 && level < BREATH_LEVELS - 1) step++;
      else if (step > 0) step--;
      else {
        level--;
        step = BLEND_STEPS - 1;
      }
    }
    this.lastKey = (((level * BLEND_STEPS + step) * 3 + idle.sway) * 64 + eye) * 128 + mouth;

    const pose = level * SWAY_OFFSETS.length + idle.sway;
    const out = this.frame;
    out.set(this.atlas.poses[pose] as Uint8Array);
    if (step > 0) applyBlend(out, this.atlas.blends[pose], step);

    // The face moves with the head: sway sideways, breathing upwards.
    const dx = SWAY_OFFSETS[idle.sway] ?? 0;
    const dy = -(level + (step * 2 >= BLEND_STEPS ? 1 : 0));
    pasteSprite(out, this.atlas.eyes, eye, dx, dy);
    pasteSprite(out, this.atlas.mouths, mouth, dx, dy);
    return out;
  }
}

function nearestLid(lid: number): number {
  let best = 0;
  for (let i = 1; i < LID_LEVELS.length; i++) {
    if (Math.abs((LID_LEVELS[i] as number) - lid) < Math.abs((LID_LEVELS[best] as number) - lid)) {
      best = i;
    }
  }
  return best;
}

function applyBlend(
  out: Uint8Array,
  blend: { index: Uint32Array; delta: Int16Array } | undefined,
  step: number,
): void {
  if (!blend) return;
  const { index, delta } = blend;
  const half = BLEND_STEPS >> 1;
  for (let i = 0; i < index.length; i++) {
    const k = index[i] as number;
    out[k] = (out[k] as number) + (((delta[i] as number) * step + half) >> BLEND_SHIFT);
  }
}
