// SPDX-License-Identifier: GPL-3.0-or-later
import { visemeIndex, type MouthPose } from '../lipsync/viseme.js';
import { FRAME_HEIGHT, FRAME_WIDTH, type Rect } from './faceGeometry.js';
import { i420Size } from './i420.js';
import { FaceMotion } from './faceMotion.js';
import type { ConversationCue } from './listeningMotion.js';
import {
  composeFrame,
  frameParts,
  liftSteps,
  mouthLevel,
  nearestLid,
} from '@visage-avatar/web/composition';
import {
  avatarAtlas,
  avatarAtlasAsync,
  BLEND_STEPS,
  BREATH_LEVELS,
  GAZES,
  LID_LEVELS,
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
  const eye = gaze * LID_LEVELS.length + nearestLid(pose.lid ?? 0);
  const mouthIndex = mouthSpriteIndex(visemeIndex(mouth.viseme), mouthLevel(mouth.openness));
  composeFrame(atlas, out, FRAME_WIDTH, FRAME_HEIGHT, frameParts(level, 0, sway, eye, mouthIndex));
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
  private readonly motion: FaceMotion;
  private lastKey = -1;

  constructor(
    private readonly atlas: AvatarAtlas,
    seed: number,
  ) {
    this.avatarId = atlas.avatarId;
    this.mouthRegion = atlas.mouthRegion;
    this.eyeRegion = atlas.eyes.rect;
    this.motion = new FaceMotion(seed);
  }

  renderFrame(input: FaceRenderInput): Uint8Array {
    const idle = this.motion.state(input);

    // Breathing between two whole-pixel frames, as a blend weight in 1/BLEND_STEPS.
    let { level, step } = liftSteps(idle.breath);
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
    composeFrame(
      this.atlas,
      this.frame,
      FRAME_WIDTH,
      FRAME_HEIGHT,
      frameParts(level, step, idle.sway, eye, mouth),
    );
    return this.frame;
  }
}
