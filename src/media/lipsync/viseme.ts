// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * The mouth vocabulary shared by lip-sync (which produces poses) and the renderer (which draws
 * them). A small, Preston-Blair-like set: enough distinct shapes to read as speech on a stylised
 * face, few enough that the renderer can pre-draw every shape at several openness levels.
 */
export const VISEMES = [
  'rest', // lips together, relaxed
  'AA', // open vowels: a, ɑ, æ, ʌ, ɐ
  'E', // mid vowels: e, ɛ, ə, ɜ
  'I', // close front vowels and j: i, ɪ
  'O', // rounded open vowels: o, ɔ, ɒ
  'U', // rounded close vowels: u, ʊ
  'MBP', // bilabials: lips pressed shut
  'FV', // labiodentals: lower lip under upper teeth
  'TH', // dentals: tongue tip between the teeth
  'L', // laterals: open, tongue tip up
  'WQ', // labial-velar approximant: tight rounded pucker
  'SZ', // alveolars and sibilants s z t d n: teeth nearly together
  'CH', // postalveolars ʃ ʒ tʃ dʒ: teeth together, lips forward
  'KG', // velars and glottals k g ŋ h: slightly open, relaxed
  'R', // rhotics ɹ r: slightly rounded
] as const;

export type Viseme = (typeof VISEMES)[number];

/** What the renderer needs for one frame's mouth. */
export interface MouthPose {
  readonly viseme: Viseme;
  /** How far the viseme's shape is realised: 0 is the closed rest mouth, 1 the full shape. */
  readonly openness: number;
}

/**
 * Shapes where the lips close (m, b, p) or the lower lip meets the upper teeth (f, v): the jaw
 * stays up however loud the sound, and only phoneme timings can tell them (the sound of an m
 * is a hum, not silence).
 */
export const LIP_CLOSURES: ReadonlySet<Viseme> = new Set<Viseme>(['MBP', 'FV']);

export const REST_POSE: MouthPose = Object.freeze({ viseme: 'rest', openness: 0 });

const VISEME_INDEX = new Map<string, number>(VISEMES.map((v, i) => [v, i]));

/** Index of a viseme in {@link VISEMES} (stable: the renderer's atlas is laid out by it). */
export function visemeIndex(viseme: Viseme): number {
  return VISEME_INDEX.get(viseme) ?? 0;
}

export function isViseme(value: string): value is Viseme {
  return VISEME_INDEX.has(value);
}
