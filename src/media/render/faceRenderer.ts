// SPDX-License-Identifier: GPL-3.0-or-later
import { visemeIndex, type MouthPose } from '../lipsync/viseme.js';
import { FRAME_HEIGHT, FRAME_WIDTH, type Rect } from './faceGeometry.js';
import { i420Size } from './i420.js';
import { IdleMotion } from './idleMotion.js';
import { ListeningMotion, type ConversationCue } from './listeningMotion.js';
import { pasteSprite } from './spriteSet.js';
import {
  avatarAtlas,
  avatarAtlasAsync,
  BLEND_SHIFT,
  BLEND_STEPS,
  BREATH_LEVELS,
  GAZES,
  LID_LEVELS,
  MOUTH_LEVELS,
  mouthSpriteIndex,
  SWAY_OFFSETS,
  type AvatarAtlas,
  type GazeName,
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
  /**
   * An agent's avatar: the agent's state and the user's questions, for the listening and
   * thinking looks (see ListeningMotion). Without it (no agent) the face has idle life only.
   */
  readonly conversation?: ConversationCue;
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
  return createAtlasFaceRenderer(avatarAtlas(avatarId), options);
}

/**
 * A renderer for any atlas of the standard shape (a catalogue avatar's, or one built from a
 * photo): the same idle life, lip-sync and per-frame cost whatever drew the sprites.
 */
export function createAtlasFaceRenderer(
  atlas: AvatarAtlas,
  options: FaceRendererOptions = {},
): FaceRenderer {
  return new AtlasFaceRenderer(atlas, options.seed ?? Math.floor(Math.random() * 2 ** 32));
}

/** One still state of a face: what a preview or a measurement needs, no idle animation. */
export interface StillPose {
  /** Breathing lift, whole pixels 0..BREATH_LEVELS-1 (default 0). */
  readonly breath?: number;
  /** Head sway, px: -1, 0 or 1 (default 0). */
  readonly sway?: number;
  /** Upper lids, 0 open .. 1 closed (default 0). */
  readonly lid?: number;
  readonly gaze?: GazeName;
  readonly mouth?: MouthPose;
}

/** A new 512x512 I420 frame of `atlas` in one still pose (the neutral face by default). */
export function renderStill(atlas: AvatarAtlas, pose: StillPose = {}): Uint8Array {
  const out = new Uint8Array(i420Size(FRAME_WIDTH, FRAME_HEIGHT));
  const level = Math.max(0, Math.min(BREATH_LEVELS - 1, Math.round(pose.breath ?? 0)));
  const sway = SWAY_OFFSETS.indexOf((pose.sway ?? 0) as (typeof SWAY_OFFSETS)[number]);
  if (sway < 0) throw new RangeError(`sway must be one of ${SWAY_OFFSETS.join(', ')}`);
  const gaze = GAZES.findIndex((g) => g.name === (pose.gaze ?? 'center'));
  const mouth = pose.mouth ?? { viseme: 'rest', openness: 0 };
  composeFrame(atlas, out, {
    level,
    step: 0,
    sway,
    eye: gaze * LID_LEVELS.length + nearestLid(pose.lid ?? 0),
    mouth: mouthSpriteIndex(visemeIndex(mouth.viseme), mouthLevel(mouth.openness)),
  });
  return out;
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
  readonly mouthRegion: Rect;
  readonly eyeRegion: Rect;
  readonly recommendedFps = RECOMMENDED_FPS;
  readonly avatarId: string;
  // Its own ArrayBuffer at offset 0: rtc-node's VideoFrame passes `data.buffer` to native code.
  private readonly frame = new Uint8Array(i420Size(FRAME_WIDTH, FRAME_HEIGHT));
  private readonly motion: IdleMotion;
  private readonly listening: ListeningMotion;
  private lastKey = -1;

  constructor(
    private readonly atlas: AvatarAtlas,
    seed: number,
  ) {
    this.avatarId = atlas.avatarId;
    this.mouthRegion = atlas.mouthRegion;
    this.eyeRegion = atlas.eyes.rect;
    this.motion = new IdleMotion(seed);
    this.listening = new ListeningMotion(seed);
  }

  renderFrame(input: FaceRenderInput): Uint8Array {
    if (!Number.isFinite(input.timeMs))
      throw new RangeError(`timeMs must be finite, got ${input.timeMs}`);
    const idle = this.listening.apply(
      this.motion.update(input.timeMs, input.parked, input.mouth.openness > 0.05),
      input.timeMs,
      input.parked,
      input.conversation,
    );

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
    const mouth = mouthSpriteIndex(
      visemeIndex(input.mouth.viseme),
      mouthLevel(input.mouth.openness),
    );

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
    composeFrame(this.atlas, this.frame, { level, step, sway: idle.sway, eye, mouth });
    return this.frame;
  }
}

/** Which atlas parts make a frame: breath level and blend step, sway index, sprite indices. */
interface FrameParts {
  level: number;
  step: number;
  sway: number;
  eye: number;
  mouth: number;
}

/** The frame for `parts` into `out`: a whole pose, its breathing blend, then the face sprites. */
function composeFrame(atlas: AvatarAtlas, out: Uint8Array, parts: FrameParts): void {
  const { level, step, sway } = parts;
  const pose = level * SWAY_OFFSETS.length + sway;
  out.set(atlas.poses[pose] as Uint8Array);
  if (step > 0) applyBlend(out, atlas.blends[pose], step);

  // The face moves with the head: sway sideways, breathing upwards.
  const dx = SWAY_OFFSETS[sway] ?? 0;
  const dy = -(level + (step * 2 >= BLEND_STEPS ? 1 : 0));
  pasteSprite(out, atlas.eyes, parts.eye, dx, dy);
  pasteSprite(out, atlas.mouths, parts.mouth, dx, dy);
}

function mouthLevel(openness: number): number {
  return Math.round(Math.min(1, Math.max(0, openness)) * (MOUTH_LEVELS - 1));
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
  blend: { spans: Uint32Array; delta: Int16Array } | undefined,
  step: number,
): void {
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
