// SPDX-License-Identifier: GPL-3.0-or-later
import { LIP_CLOSURES, type Viseme } from '../lipsync/viseme.js';

/**
 * The drawable description of a mouth, in pixels. A viseme at openness 1 is one of these; lower
 * openness interpolates from the rest mouth, so every viseme starts closed.
 */
export interface MouthShape {
  /** Half of the mouth's width (corner to centre). */
  readonly halfWidth: number;
  /** How far the inner edge of the upper lip rises above the mouth line. */
  readonly openTop: number;
  /** How far the inner edge of the lower lip drops below the mouth line. */
  readonly openBottom: number;
  /** 0: a wide lens-shaped opening; 1: a round one (O, U). */
  readonly roundness: number;
  /** Visible height of the upper and lower teeth. */
  readonly upperTeeth: number;
  readonly lowerTeeth: number;
  /** 0..1: how much tongue shows at the bottom of the opening. */
  readonly tongue: number;
  /** 0..1: tongue tip shown between the teeth (TH) or behind the upper teeth (L). */
  readonly tongueTip: number;
  /** Upper teeth rest on the lower lip (F, V). */
  readonly teethOnLip: number;
  /** Corner lift, px (a smile); negative turns the corners down. */
  readonly smile: number;
  readonly upperLip: number;
  readonly lowerLip: number;
}

const REST: MouthShape = {
  halfWidth: 28,
  openTop: 0,
  openBottom: 0,
  roundness: 0.3,
  upperTeeth: 0,
  lowerTeeth: 0,
  tongue: 0,
  tongueTip: 0,
  teethOnLip: 0,
  smile: 2.5,
  upperLip: 5.5,
  lowerLip: 7.5,
};

/**
 * Each viseme's full shape, as the differences from the rest mouth. The rounded shapes (O, U, WQ,
 * CH, R) narrow the mouth to 60 to 85 % of its rest width, not to 45 to 75 %: with the jaw dropped
 * behind them their opening then grows with the sound about as much as an open vowel's. The mouth
 * measured in rendered frames follows the audio envelope at r = 0.79 to 0.84 per stock voice and
 * text (`test/media/lipsync/lipsyncOnSpeech.test.ts` prints them), where it was 0.75 to 0.83 with
 * narrower rounded shapes and whole lip closures; the lowest was a text full of "o" and "w".
 */
const TARGETS: Record<Viseme, Partial<MouthShape>> = {
  rest: {},
  AA: {
    halfWidth: 29,
    openTop: 9,
    openBottom: 21,
    roundness: 0.55,
    upperTeeth: 5,
    tongue: 0.55,
    smile: 1,
  },
  E: {
    halfWidth: 32,
    openTop: 6,
    openBottom: 11,
    roundness: 0.25,
    upperTeeth: 5,
    lowerTeeth: 2,
    tongue: 0.3,
    smile: 3.5,
  },
  I: {
    halfWidth: 34,
    openTop: 4,
    openBottom: 6,
    roundness: 0.1,
    upperTeeth: 4,
    lowerTeeth: 3,
    smile: 5,
  },
  O: {
    halfWidth: 23,
    openTop: 9,
    openBottom: 14,
    roundness: 1,
    upperTeeth: 2,
    tongue: 0.4,
    smile: 0,
    upperLip: 7.5,
    lowerLip: 9.5,
  },
  U: {
    halfWidth: 19,
    openTop: 4,
    openBottom: 6,
    roundness: 1,
    smile: -0.5,
    upperLip: 8.5,
    lowerLip: 9.5,
  },
  MBP: { halfWidth: 26, smile: 1.5, upperLip: 3.5, lowerLip: 5.5 },
  FV: {
    halfWidth: 28,
    openTop: 3,
    openBottom: -1,
    upperTeeth: 5,
    teethOnLip: 1,
    smile: 2.5,
    lowerLip: 6.5,
  },
  TH: {
    halfWidth: 28,
    openTop: 4,
    openBottom: 6,
    roundness: 0.3,
    upperTeeth: 3,
    lowerTeeth: 2,
    tongueTip: 1,
  },
  L: {
    halfWidth: 28,
    openTop: 7,
    openBottom: 12,
    roundness: 0.45,
    upperTeeth: 4,
    tongue: 0.3,
    tongueTip: 0.8,
  },
  WQ: {
    halfWidth: 17,
    openTop: 3,
    openBottom: 4,
    roundness: 1,
    smile: -1,
    upperLip: 9.5,
    lowerLip: 10,
  },
  SZ: {
    halfWidth: 31,
    openTop: 3,
    openBottom: 4,
    roundness: 0.1,
    upperTeeth: 3,
    lowerTeeth: 3,
    smile: 3.5,
  },
  CH: {
    halfWidth: 24,
    openTop: 5,
    openBottom: 6,
    roundness: 0.75,
    upperTeeth: 4,
    lowerTeeth: 3,
    upperLip: 7.5,
    lowerLip: 9,
  },
  KG: {
    halfWidth: 28,
    openTop: 5,
    openBottom: 10,
    roundness: 0.35,
    upperTeeth: 4,
    tongue: 0.6,
    smile: 2,
  },
  R: {
    halfWidth: 24,
    openTop: 4,
    openBottom: 7,
    roundness: 0.8,
    upperTeeth: 3,
    upperLip: 7.5,
    lowerLip: 9,
  },
};

/**
 * The jaw: loudness opens the mouth whatever the lips do (as in JALI, jaw and lips are separate
 * controls). Every shape but the lip closures opens at least this far at full openness, so the
 * mouth a viewer sees opens with the sound: spread and rounded shapes show their teeth or their
 * pucker with the jaw dropped behind, instead of staying shut while the voice is loud. Set so
 * the mouth opening measured in the frames follows the audio envelope (test/media/lipsync).
 */
const JAW_OPEN_TOP = 7;
const JAW_OPEN_BOTTOM = 18;

/** The mouth for `viseme` realised to `amount` (0 = rest, 1 = full shape). */
export function mouthShape(viseme: Viseme, amount: number): MouthShape {
  const lips: MouthShape = { ...REST, ...TARGETS[viseme] };
  const target: MouthShape =
    viseme === 'rest' || LIP_CLOSURES.has(viseme)
      ? lips
      : {
          ...lips,
          openTop: Math.max(lips.openTop, JAW_OPEN_TOP),
          openBottom: Math.max(lips.openBottom, JAW_OPEN_BOTTOM),
        };
  const t = Math.min(1, Math.max(0, amount));
  const out: Record<string, number> = {};
  for (const key of Object.keys(REST) as (keyof MouthShape)[]) {
    out[key] = REST[key] + (target[key] - REST[key]) * t;
  }
  return out as unknown as MouthShape;
}
