// SPDX-License-Identifier: GPL-3.0-or-later
import { BREATH_LEVELS, GAZES, type GazeName } from './spriteAtlas.js';

/** The idle life of a face at one moment. */
export interface IdleState {
  /** Figure lift in pixels, 0..BREATH_LEVELS-1, fractional (sub-pixel). */
  breath: number;
  /** Index into SWAY_OFFSETS. */
  sway: number;
  /** Upper lid, 0 open .. 1 closed. */
  lid: number;
  /** Index into GAZES. */
  gaze: number;
}

interface Timing {
  readonly breathPeriodMs: number;
  readonly breathAmplitude: number;
  readonly blinkEveryMs: readonly [number, number];
  readonly swayEveryMs: readonly [number, number];
  readonly baseLid: number;
}

const ACTIVE: Timing = {
  breathPeriodMs: 4200,
  breathAmplitude: BREATH_LEVELS - 1,
  blinkEveryMs: [1800, 5500],
  swayEveryMs: [2500, 6000],
  baseLid: 0,
};
/** Parked: slower, shallower breathing, rarer blinks, lids half down, eyes lowered. */
const PARKED: Timing = {
  breathPeriodMs: 6500,
  breathAmplitude: BREATH_LEVELS - 2,
  blinkEveryMs: [3500, 8000],
  swayEveryMs: [6000, 12000],
  baseLid: 0.55,
};

/** While speaking the head moves more often, and the eyes mostly hold the listener's. */
const SPEAKING_SWAY_EVERY_MS: readonly [number, number] = [900, 2600];
/** Speech counts as ongoing this long after the mouth last moved (pauses between words). */
const SPEAKING_HOLD_MS = 600;
/** Brow raises for emphasis: at the start of speech after a pause, then now and then. */
const BROW_RAISE_MS: readonly [number, number] = [350, 750];
const BROW_RAISE_EVERY_MS: readonly [number, number] = [1800, 5000];

/** Lid closing, closed and opening times of a blink (ms): about 200 ms in all, as people do. */
const BLINK_CLOSE_MS = 70;
const BLINK_HOLD_MS = 40;
const BLINK_OPEN_MS = 100;
const DOUBLE_BLINK_CHANCE = 0.15;
const GAZE_HOLD_MS: readonly [number, number] = [1200, 3800];
/** Time constant for lids and breathing depth to settle after parking or resuming. */
const SETTLE_MS = 180;

const gazeIndex = (name: GazeName): number => GAZES.findIndex((g) => g.name === name);

type LookDirection = 'center' | 'left' | 'right' | 'down';
const RAISED = { center: 'center-raised', left: 'left-raised', right: 'right-raised' } as const;

/**
 * Time-driven idle animation: breathing, small head sway, blinks at random natural intervals, gaze
 * shifts. `update` takes the frame's time (the playout clock), so the motion does not depend on the
 * frame rate; random choices come from a seeded generator, so a seed replays the same life.
 */
export class IdleMotion {
  private readonly random: () => number;
  private readonly state: IdleState = { breath: 0, sway: 1, lid: 0, gaze: 0 };
  private lastMs: number | undefined;
  private phase = 0;
  private amplitude = ACTIVE.breathAmplitude;
  private baseLid = 0;
  private blinkAtMs = 0;
  private swayAtMs = 0;
  private gazeAtMs = 0;
  private wasParked = false;
  private lastSpeechMs = -Infinity;
  private gazeName: LookDirection = 'center';
  private browUntilMs = -Infinity;
  private browAtMs = Infinity;

  constructor(seed: number) {
    this.random = mulberry32(seed);
    this.phase = this.random();
  }

  /** `mouthMoving`: the mouth is open in this frame (speech), which livens head and gaze. */
  update(timeMs: number, parked: boolean, mouthMoving = false): IdleState {
    const timing = parked ? PARKED : ACTIVE;
    if (this.lastMs === undefined || timeMs < this.lastMs) {
      // First frame, or the clock went back: start the schedules from here.
      this.lastMs = timeMs;
      this.blinkAtMs = timeMs + this.between(timing.blinkEveryMs) * 0.5;
      this.swayAtMs = timeMs + this.between(timing.swayEveryMs);
      this.gazeAtMs = timeMs + this.between(GAZE_HOLD_MS);
      this.baseLid = timing.baseLid;
      this.wasParked = parked;
      this.gazeName = parked ? 'down' : 'center';
    }
    const dt = Math.min(1000, timeMs - this.lastMs);
    const wasSpeaking = !parked && timeMs - dt - this.lastSpeechMs < SPEAKING_HOLD_MS;
    if (mouthMoving) this.lastSpeechMs = timeMs;
    const speaking = !parked && timeMs - this.lastSpeechMs < SPEAKING_HOLD_MS;
    if (speaking && !wasSpeaking) {
      // Speech starts: often with lifted brows, as people do when they begin to talk.
      this.browAtMs = timeMs + (this.random() < 0.6 ? 0 : this.between(BROW_RAISE_EVERY_MS));
    }
    if (!speaking) this.browAtMs = Infinity;
    if (timeMs >= this.browAtMs) {
      this.browUntilMs = timeMs + this.between(BROW_RAISE_MS);
      this.browAtMs = timeMs + this.between(BROW_RAISE_EVERY_MS);
    }
    this.lastMs = timeMs;
    const settle = 1 - Math.exp(-dt / SETTLE_MS);

    this.phase = (this.phase + dt / timing.breathPeriodMs) % 1;
    this.amplitude += (timing.breathAmplitude - this.amplitude) * settle;
    this.state.breath = this.amplitude * 0.5 * (1 - Math.cos(2 * Math.PI * this.phase));

    if (parked !== this.wasParked) {
      this.wasParked = parked;
      this.gazeName = parked ? 'down' : 'center';
      this.gazeAtMs = timeMs + this.between(GAZE_HOLD_MS);
    }
    if (timeMs >= this.gazeAtMs) {
      this.gazeName = parked ? 'down' : this.pickGaze(speaking);
      this.gazeAtMs = timeMs + this.between(GAZE_HOLD_MS);
    }
    if (timeMs >= this.swayAtMs) {
      const r = this.random();
      this.state.sway = parked ? 1 : r < 0.3 ? 0 : r < 0.7 ? 1 : 2;
      this.swayAtMs = timeMs + this.between(speaking ? SPEAKING_SWAY_EVERY_MS : timing.swayEveryMs);
    }

    this.baseLid += (timing.baseLid - this.baseLid) * settle;
    const sinceBlink = timeMs - this.blinkAtMs;
    let blink = 0;
    if (sinceBlink >= 0) {
      blink = blinkLid(sinceBlink);
      if (sinceBlink >= BLINK_CLOSE_MS + BLINK_HOLD_MS + BLINK_OPEN_MS) {
        const again = this.random() < DOUBLE_BLINK_CHANCE;
        this.blinkAtMs = timeMs + (again ? 120 : this.between(timing.blinkEveryMs));
      }
    }
    this.state.lid = Math.max(this.baseLid, blink);
    const raised = !parked && this.gazeName !== 'down' && timeMs < this.browUntilMs;
    this.state.gaze = gazeIndex(
      raised ? RAISED[this.gazeName as Exclude<LookDirection, 'down'>] : this.gazeName,
    );
    return this.state;
  }

  private pickGaze(speaking: boolean): LookDirection {
    const r = this.random();
    if (speaking) return r < 0.8 ? 'center' : r < 0.9 ? 'left' : 'right';
    return r < 0.56 ? 'center' : r < 0.78 ? 'left' : 'right';
  }

  private between([lo, hi]: readonly [number, number]): number {
    return lo + (hi - lo) * this.random();
  }
}

/** How long a blink lasts, ms: closing, closed and opening (`slowness` stretches all three). */
export function blinkMs(slowness = 1): number {
  return (BLINK_CLOSE_MS + BLINK_HOLD_MS + BLINK_OPEN_MS) * slowness;
}

/** The upper lid `sinceMs` into a blink (0 open .. 1 closed); `slowness` stretches it in time. */
export function blinkLid(sinceMs: number, slowness = 1): number {
  const t = sinceMs / slowness;
  if (t < BLINK_CLOSE_MS) return t / BLINK_CLOSE_MS;
  if (t < BLINK_CLOSE_MS + BLINK_HOLD_MS) return 1;
  const opening = (t - BLINK_CLOSE_MS - BLINK_HOLD_MS) / BLINK_OPEN_MS;
  return Math.max(0, 1 - opening);
}

/** Small, fast, seedable PRNG (mulberry32). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
