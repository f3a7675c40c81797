// SPDX-License-Identifier: GPL-3.0-or-later
import { blinkLid, blinkMs, mulberry32, type IdleState } from './idleMotion.js';
import { BREATH_LEVELS, GAZES, type GazeName } from './spriteAtlas.js';

/**
 * What an agent's avatar knows of the conversation, read from the room each frame (see
 * `AgentStateWatcher`). Only sessions that speak for an agent (`publish_on_behalf`) have one.
 */
export interface ConversationCue {
  /**
   * The agent's `lk.agent.state` attribute as the agent set it (`initializing`, `listening`,
   * `thinking`, `speaking`); undefined until it sets one. Any other value is today's idle life.
   */
  readonly agentState: string | undefined;
  /** How many of the user's questions were heard so far: each new one lifts the brows. */
  readonly questions: number;
  /**
   * How many times the user's turn has ended (the agent went from `listening` to `thinking`):
   * each one is a nod. Counted where the state changes arrive, so that a `thinking` shorter than
   * a frame still nods.
   */
  readonly turnsEnded: number;
}

/** The end of the user's turn (listening -> thinking): the head dips and comes back. */
export const NOD_MS = 650;
/** Shares of NOD_MS: up to the top of the breath range, then down to its bottom, then back. */
const NOD_RISE_END = 0.2;
const NOD_FALL_END = 0.45;
/** The lids follow the head down a little at the bottom of the nod. */
const NOD_LID = 0.4;
/** Brows up after the user asked something. */
export const QUESTION_BROW_MS = 1100;
/** While listening the eyes stay on the viewer; blinks come about as often as in idle life. */
const LISTEN_BLINK_EVERY_MS: readonly [number, number] = [2000, 5000];
/** A slight tilt of the head to one side, held a while, then changed. */
const LISTEN_TILT_HOLD_MS: readonly [number, number] = [3000, 7000];
/** Thinking: lids a little lowered, rarer and slower blinks, the eyes off to one side. */
const THINK_LID = 0.2;
const THINK_BLINK_EVERY_MS: readonly [number, number] = [3500, 7500];
const THINK_BLINK_SLOWNESS = 1.5;
/** On turning aside the eyes first go up-aside (brows lifted), then settle aside. */
const THINK_UP_MS: readonly [number, number] = [700, 1200];
/** How long the eyes stay on one side before they go to the other. */
const THINK_SIDE_HOLD_MS: readonly [number, number] = [2200, 4200];
/** Time constant of the lids' resting height between listening and thinking. */
const SETTLE_MS = 180;

type Mode = 'off' | 'listening' | 'thinking';
type Side = 'left' | 'right';

const gazeIndex = (name: GazeName): number => GAZES.findIndex((g) => g.name === name);
/** SWAY_OFFSETS indices: the head leans to the side the eyes go. */
const SWAY_TOWARDS: Record<Side, number> = { left: 0, right: 2 };
const SWAY_CENTRE = 1;
const RAISED: Record<Side, GazeName> = { left: 'left-raised', right: 'right-raised' };

/**
 * An agent's avatar in conversation: attentive while the agent listens (eyes on the viewer, a
 * slight tilt), a nod when the user's turn ends (listening -> thinking), brows up at the user's
 * question, a visibly thinking look while the agent thinks (eyes up-aside then aside, lids a
 * little lowered, slower blinks, the head leaning after the eyes). Works on top of `IdleMotion`:
 * breathing goes on underneath; speaking (but for a nod that began as the turn ended), parking
 * and any other state pass idle life through unchanged, and so does every frame without a cue
 * (sessions without an agent).
 *
 * Everything is expressed in the atlas's pose vocabulary (breath lift, sway, lid, gaze with brows),
 * so it costs nothing per frame and drives catalogue figures and photo avatars alike. The nod's
 * depth is the breath range (BREATH_LEVELS - 1 px).
 */
export class ListeningMotion {
  private readonly random: () => number;
  private readonly state: IdleState = { breath: 0, sway: SWAY_CENTRE, lid: 0, gaze: 0 };
  private mode: Mode = 'off';
  private questionsSeen: number | undefined;
  private turnsSeen: number | undefined;
  private lastMs: number | undefined;
  private nodAtMs = -Infinity;
  private browUntilMs = -Infinity;
  private blinkAtMs = 0;
  private baseLid = 0;
  private tilt = SWAY_CENTRE;
  private tiltAtMs = 0;
  private side: Side = 'left';
  private sideAtMs = 0;
  private upUntilMs = -Infinity;

  constructor(seed: number) {
    this.random = mulberry32(seed ^ 0x5bd1e995);
  }

  /** `idle` as this frame's idle life drew it; returns it unchanged, or the conversation's look. */
  apply(
    idle: IdleState,
    timeMs: number,
    parked: boolean,
    cue: ConversationCue | undefined,
  ): IdleState {
    if (this.lastMs !== undefined && timeMs < this.lastMs) this.nodAtMs = -Infinity;
    const dt = this.lastMs === undefined ? 0 : Math.max(0, Math.min(1000, timeMs - this.lastMs));
    this.lastMs = timeMs;
    const agentState = cue?.agentState;
    const questions = cue?.questions ?? 0;
    if (this.questionsSeen !== undefined && questions > this.questionsSeen) {
      this.browUntilMs = timeMs + QUESTION_BROW_MS;
    }
    this.questionsSeen = questions;
    const turns = cue?.turnsEnded ?? 0;
    if (this.turnsSeen !== undefined && turns > this.turnsSeen) this.nodAtMs = timeMs;
    this.turnsSeen = turns;
    const nodding = !parked && cue !== undefined && timeMs - this.nodAtMs < NOD_MS;

    const mode: Mode =
      parked || !cue
        ? 'off'
        : agentState === 'listening' || agentState === 'thinking'
          ? agentState
          : 'off';
    if (mode === 'off') {
      this.mode = mode;
      this.baseLid = 0;
      if (!nodding) return idle;
      // The agent already speaks (its thinking was shorter than a frame): the nod goes on over
      // the speaking face.
      const p = (timeMs - this.nodAtMs) / NOD_MS;
      const out = this.state;
      out.breath = nodBreath(p, idle.breath);
      out.lid = Math.max(idle.lid, NOD_LID * nodDepth(p));
      out.sway = idle.sway;
      out.gaze = idle.gaze;
      return out;
    }
    if (mode !== this.mode) this.enter(mode, timeMs, idle);

    const out = this.state;
    out.breath = nodding ? nodBreath((timeMs - this.nodAtMs) / NOD_MS, idle.breath) : idle.breath;

    const thinking = mode === 'thinking' && !nodding;
    const settle = 1 - Math.exp(-dt / SETTLE_MS);
    this.baseLid += ((thinking ? THINK_LID : 0) - this.baseLid) * settle;
    const slowness = thinking ? THINK_BLINK_SLOWNESS : 1;
    let blink = 0;
    const sinceBlink = timeMs - this.blinkAtMs;
    if (sinceBlink >= 0) {
      blink = blinkLid(sinceBlink, slowness);
      if (sinceBlink >= blinkMs(slowness)) {
        this.blinkAtMs =
          timeMs + this.between(thinking ? THINK_BLINK_EVERY_MS : LISTEN_BLINK_EVERY_MS);
      }
    }
    const nodLid = nodding ? NOD_LID * nodDepth((timeMs - this.nodAtMs) / NOD_MS) : 0;
    out.lid = Math.max(this.baseLid, blink, nodLid);

    const brows = timeMs < this.browUntilMs;
    if (thinking) {
      if (timeMs >= this.sideAtMs) {
        this.side = this.side === 'left' ? 'right' : 'left';
        this.sideAtMs = timeMs + this.between(THINK_SIDE_HOLD_MS);
        this.upUntilMs = timeMs + this.between(THINK_UP_MS) * 0.6;
      }
      const up = brows || timeMs < this.upUntilMs;
      out.gaze = gazeIndex(up ? RAISED[this.side] : this.side);
      out.sway = SWAY_TOWARDS[this.side];
    } else {
      // Listening (or nodding at the end of the user's turn): eyes on the viewer.
      if (timeMs >= this.tiltAtMs) {
        const r = this.random();
        this.tilt = r < 0.25 ? 0 : r < 0.75 ? SWAY_CENTRE : 2;
        this.tiltAtMs = timeMs + this.between(LISTEN_TILT_HOLD_MS);
      }
      out.gaze = gazeIndex(brows ? 'center-raised' : 'center');
      out.sway = nodding ? SWAY_CENTRE : this.tilt;
    }
    return out;
  }

  private enter(mode: Mode, timeMs: number, idle: IdleState): void {
    if (this.mode === 'off') {
      // Take over from idle life without a jump: same lids, and the next blink a while away.
      this.baseLid = idle.lid < 0.5 ? idle.lid : 0;
      this.blinkAtMs = timeMs + this.between(LISTEN_BLINK_EVERY_MS) * 0.5;
    }
    this.mode = mode;
    if (mode === 'listening') {
      this.tiltAtMs = timeMs + this.between(LISTEN_TILT_HOLD_MS) * 0.5;
      this.tilt = SWAY_CENTRE;
    } else {
      // The eyes go aside once the nod (if any) is over.
      const start = Math.max(timeMs, this.nodAtMs + NOD_MS);
      this.side = this.random() < 0.5 ? 'left' : 'right';
      this.sideAtMs = start + this.between(THINK_SIDE_HOLD_MS);
      this.upUntilMs = start + this.between(THINK_UP_MS);
    }
  }

  private between([lo, hi]: readonly [number, number]): number {
    return lo + (hi - lo) * this.random();
  }
}

/** The figure's lift `p` (0..1) into a nod from `rest`: up to the top, down to 0, back to rest. */
export function nodBreath(p: number, rest: number): number {
  const top = BREATH_LEVELS - 1;
  if (p < NOD_RISE_END) return rest + (top - rest) * ease(p / NOD_RISE_END);
  if (p < NOD_FALL_END) return top * (1 - ease((p - NOD_RISE_END) / (NOD_FALL_END - NOD_RISE_END)));
  return rest * ease((p - NOD_FALL_END) / (1 - NOD_FALL_END));
}

/** How far down the nod is at `p` (0 up .. 1 at the bottom). */
function nodDepth(p: number): number {
  if (p < NOD_RISE_END) return 0;
  if (p < NOD_FALL_END) return ease((p - NOD_RISE_END) / (NOD_FALL_END - NOD_RISE_END));
  return 1 - ease((p - NOD_FALL_END) / (1 - NOD_FALL_END));
}

function ease(t: number): number {
  const x = Math.max(0, Math.min(1, t));
  return x * x * (3 - 2 * x);
}
