// SPDX-License-Identifier: GPL-3.0-or-later
import { IdleMotion, type IdleState } from './idleMotion.js';
import { ListeningMotion } from './listeningMotion.js';
import type { FaceRenderInput } from './faceRenderer.js';
import { GAZES, SWAY_OFFSETS, type GazeName } from './spriteAtlas.js';

/** The face's life at one moment, in the names a renderer elsewhere (a browser) understands. */
export interface FacePose {
  /** The head's breathing lift, px, fractional (0..BREATH_LEVELS-1). */
  readonly lift: number;
  /** The head's sideways lean, px: -1, 0 or 1. */
  readonly sway: number;
  /** Upper lids, 0 open .. 1 shut. */
  readonly lid: number;
  readonly gaze: GazeName;
  /** Which life the face has now. */
  readonly look: 'idle' | 'listening' | 'thinking' | 'speaking' | 'parked';
}

/**
 * The motion of a face without its drawing: idle life, the listening looks and parking, the same
 * as a renderer's (the same classes, the same seed give the same motion). A `client` mode session
 * sends it to the viewer's browser, which draws it.
 */
export class FaceMotion {
  private readonly idle: IdleMotion;
  private readonly listening: ListeningMotion;

  constructor(seed: number) {
    this.idle = new IdleMotion(seed);
    this.listening = new ListeningMotion(seed);
  }

  /** The state a renderer draws for `input` (what `FaceRenderer.renderFrame` composes). */
  state(input: FaceRenderInput): IdleState {
    if (!Number.isFinite(input.timeMs))
      throw new RangeError(`timeMs must be finite, got ${input.timeMs}`);
    return this.listening.apply(
      this.idle.update(input.timeMs, input.parked, input.mouth.openness > 0.05),
      input.timeMs,
      input.parked,
      input.conversation,
    );
  }

  pose(input: FaceRenderInput): FacePose {
    const s = this.state(input);
    const agent = input.conversation?.agentState;
    return {
      lift: s.breath,
      sway: SWAY_OFFSETS[s.sway] ?? 0,
      lid: s.lid,
      gaze: GAZES[s.gaze]?.name ?? 'center',
      look: input.parked
        ? 'parked'
        : agent === 'listening' || agent === 'thinking' || agent === 'speaking'
          ? agent
          : 'idle',
    };
  }
}
