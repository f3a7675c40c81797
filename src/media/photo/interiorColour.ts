// SPDX-License-Identifier: GPL-3.0-or-later
import { luma, type Colour, type FaceColours } from './faceColours.js';
import type { MouthPoseGeometry } from './mouthMotion.js';
import {
  CAVITY_ACROSS,
  CAVITY_BOWL,
  CAVITY_DEEPEST,
  CAVITY_RIM_LIFT,
  CAVITY_TOP_SHADE,
  darkChroma,
  darkHueOf,
  greyer,
  portraitDark,
  scaled,
  warmDark,
} from './mouthDark.js';
import { desaturated, mottleAt, realCavityShade, realTeeth } from './mouthInterior.js';
import type { PhotoTeeth } from './photoTeeth.js';
import { clamp, lerp, smoothstep } from './warp.js';

/**
 * The colour of the inside of an open mouth at a point of its opening, where the photo shows none
 * of it (renderMouthSprite warps the photo and lays this in the opening): the dark of the cavity
 * (its depth, shade and warm colour, and the chroma gain that sets its warmth per portrait), the
 * tongue, and the upper and lower teeth, all following the light on the face.
 */
/**
 * Parted in the photo's own dark, the cone lightens towards the top and bottom rims by this share
 * of its radius only (they meet the photo's dark; lighter there, the inside read as a ring: 51 %
 * of the columns at OWN_DARK_RIM 2.2), towards the corners fully.
 */
const OWN_DARK_UP_DOWN = 0.3;
/**
 * And its law (r^0.6: lighter soon away from the deepest): a dark at most 2.2 times as light as the
 * photo's own leaves little depth to shade, and linear in r 28 % of sample5 dark's dark lay within
 * a tenth of its depth of its floor (real open mouths 5 to 23 %).
 */
const OWN_DARK_BOWL = 0.4;
/**
 * The tongue lies low and back in the mouth's shade: its lit top at most this many times as light
 * as the dark around it (a tongue in the lips' own light read as a lighter blob ringed by the
 * dark, sample5 dark's; at 1.3 and with the cavity's rim as light as the tongue it did not show
 * at all: Chuck Norris's and Bill Murray's open mouths were a smooth cone of dark).
 */
const TONGUE_OVER_CAVITY = 1.45;
/** The tongue's top catches the light over this share of its height; its front is in shade. */
const TONGUE_LIT_TOP = 0.3;
/** Its front, towards the lower lip, this much darker than its lit top. */
const TONGUE_FRONT_SHADE = 0.3;
/**
 * The shadow the upper teeth cast on the cavity just below them: this much darker at their edge,
 * fading over UNDER_TEETH_REACH of the opening's height (a cone lighter towards every rim lit the
 * dark right under the teeth, where a real mouth is darkest).
 */
const UNDER_TEETH_SHADOW = 0.15;
const UNDER_TEETH_REACH = 0.2;
/**
 * The dark's mottle (mottleAt): its luma varies by this share either way at a few px, where a
 * smooth cone of dark with the grain alone read at 3x as sprayed paint (Chuck Norris's).
 */
const CAVITY_MOTTLE = 0.22;

export interface InteriorLook {
  /** The dark grey (`cavity`), as before issue 43: a reference for measuring (renderMouthSprite). */
  greyDark: boolean;
  cavity: Colour;
  lipEdge: Colour;
  teeth: Colour;
  tongueColour: Colour;
  tongueLuma: number;
  /** The lumas of `cavity` and `lipEdge` (once per sprite, not per pixel). */
  cavityLuma: number;
  lipEdgeLuma: number;
  /** The photo's own dark's luma (Infinity where it shows none). */
  ownDarkLuma: number;
  /**
   * The hue of a mouth's dark where the photo has none of its own (at luma 1): the lips', its
   * chroma the build's gain (portraitDarkGain) times theirs.
   */
  darkHue: Colour;
  /** The hue of the photo's own dark (over its luma; darkHue where it shows none). */
  ownDarkHue: Colour;
  /** The lips' luma (the dark's warmth fades as it nears it: darkChroma). */
  lipLuma: number;
  /** How much lighter than its deepest the cavity's rim may be (CAVITY_RIM_LUMA, OWN_DARK_RIM). */
  rimLift: number;
  lightLeft: number;
  lightRight: number;
  /** Visible heights (px) of the upper and lower teeth, and the tongue's share of the opening. */
  upperTeeth: number;
  lowerTeeth: number;
  tongue: number;
  tongueTip: number;
  teethOnLip: number;
}

export function interiorLook(
  c: FaceColours,
  photo: PhotoTeeth,
  pose: MouthPoseGeometry,
  greyDark: boolean,
  darkGain: number,
): InteriorLook {
  const { shape, scale } = pose;
  const mean = (c.lightLeft + c.lightRight) / 2 || 1;
  const lip = c.lips;
  const tongue: Colour = [lip[0] * 0.88, lip[1] * 0.56, lip[2] * 0.6];
  const lipEdge = desaturated(scaled(lip, 0.3), 0.5);
  const darkHue = darkHueOf(lip, darkGain);
  return {
    ...portraitDark(c, photo),
    greyDark,
    darkHue,
    // Through the aimed gain as the lips' hue is (capped at the real darks' saturation): as it
    // was, Nicolas Cage's thin dark line gave an orange-red fill no aim could move (warmth 2.15
    // times his lips', saturation 0.92; now 1.82 and 0.84).
    ownDarkHue: photo.dark ? darkHueOf(photo.dark, darkGain) : darkHue,
    lipEdge,
    lipEdgeLuma: luma(...lipEdge),
    teeth: photo.colour,
    tongueColour: desaturated(tongue, 0.45),
    tongueLuma: luma(...desaturated(tongue, 0.45)),
    lightLeft: clamp(c.lightLeft / mean, 0.6, 1.4),
    lightRight: clamp(c.lightRight / mean, 0.6, 1.4),
    upperTeeth: shape.upperTeeth * scale * 0.85,
    lowerTeeth: shape.lowerTeeth * scale * 0.85,
    tongue: shape.tongue,
    tongueTip: shape.tongueTip,
    teethOnLip: shape.teethOnLip,
  };
}

/** Upper teeth resting on the lower lip (f, v): shown just below the upper lip's inner edge. */
export function teethOnLipCover(
  f: { u: number; v: number },
  top: number,
  opening: NonNullable<MouthPoseGeometry['opening']>,
  look: InteriorLook,
): number {
  if (look.teethOnLip <= 0) return 0;
  const t = across(f.u, opening);
  const height = synthesizedUpperTeeth(f.u, opening, look) * teethProfile(t);
  if (height <= 0) return 0;
  return look.teethOnLip * clamp(f.v - top + 0.5, 0, 1) * clamp(top + height - f.v + 0.5, 0, 1);
}

/** Upper teeth drawn below the photo's own: as many as the shape shows beyond those. */
function synthesizedUpperTeeth(
  u: number,
  opening: NonNullable<MouthPoseGeometry['opening']>,
  look: InteriorLook,
): number {
  if (opening.inOwnDark) return 0;
  return Math.max(0, look.upperTeeth - opening.photoTeeth.at(u));
}
/** -1..1 from one inner corner to the other. */
function across(u: number, opening: NonNullable<MouthPoseGeometry['opening']>): number {
  return ((u - opening.uMin) / (opening.uMax - opening.uMin)) * 2 - 1;
}

/** Teeth show in the front of the mouth and disappear towards the corners. */
function teethProfile(t: number): number {
  return smoothstep(0.88, 0.55, Math.abs(t));
}

/** Scratch for interiorColour's real mouth samples (one render at a time per thread). */
const REAL_DETAIL = new Float32Array(3);
/** Scratch for the tongue's colour in the dark. */
const TONGUE_COLOUR = new Float32Array(3);

export function interiorColour(
  u: number,
  v: number,
  top: number,
  bottom: number,
  opening: NonNullable<MouthPoseGeometry['opening']>,
  look: InteriorLook,
  out: Float32Array,
  px: number,
  py: number,
): void {
  const t = across(u, opening);
  const height = bottom - top;
  const light = lerp(look.lightLeft, look.lightRight, (t + 1) / 2);
  // `detail`: a real mouth's light and shade at this point, per channel (1: its mean).
  const detail = REAL_DETAIL;
  const paint = (c: Colour, cover: number, shade = 1, real?: Float32Array) => {
    if (cover <= 0) return;
    for (let k = 0; k < 3; k++) {
      out[k] = lerp(out[k] as number, c[k]! * shade * (real ? (real[k] as number) : 1), cover);
    }
  };
  // The cavity: in the shade of the upper lip and teeth at the top, a little lighter below and
  // against the lips, shaded as a real mouth's dark is.
  const fromEdge = Math.min(v - top, bottom - v);
  const near = Math.exp(-Math.max(0, fromEdge) / 1.2) * 0.35;
  const down = clamp((v - top) / Math.max(1, height), 0, 1);
  // Darkest deep in the middle of the opening, lighter towards the lips and the teeth all the way
  // round: a cone over the opening (its radius 1 at the lips' inner edge and the corners).
  const mid = top + height * CAVITY_DEEPEST;
  const ry =
    v < mid ? (mid - v) / Math.max(0.5, mid - top) : (v - mid) / Math.max(0.5, bottom - mid);
  // Parted in the photo's own dark, the top and bottom rims are that dark: lighter only across.
  // Parted just above it, the bottom rim is (lighter there, Franck laughing's opening read as a
  // maroon bar lifted over his own dark: a light band between two darks in 53 % of the columns).
  const ownDarkRim = opening.inOwnDark || (opening.overOwnDark && v > mid);
  const r = Math.min(1, Math.hypot(t * CAVITY_ACROSS, ry * (ownDarkRim ? OWN_DARK_UP_DOWN : 1)));
  const lift =
    Math.min(CAVITY_RIM_LIFT, look.rimLift) *
    r ** (opening.inOwnDark ? OWN_DARK_BOWL : CAVITY_BOWL);
  // In the shadow of the upper teeth (the photo's and the synthesized ones) just below them.
  const teethEnd = top + synthesizedUpperTeeth(u, opening, look) * teethProfile(t);
  const underTeeth =
    v > teethEnd
      ? UNDER_TEETH_SHADOW *
        Math.exp(-(v - teethEnd) / Math.max(0.5, UNDER_TEETH_REACH * height)) *
        smoothstep(1, 0.6, Math.abs(t))
      : 0;
  const mottle = 1 + CAVITY_MOTTLE * mottleAt(px, py);
  const depth =
    CAVITY_TOP_SHADE * (1 + lift) * (1 - underTeeth) * mottle * realCavityShade(t, down, detail);
  const cavityLuma = look.cavityLuma * depth;
  if (look.greyDark) {
    for (let k = 0; k < 3; k++) out[k] = look.cavity[k]! * depth;
  } else if (opening.inOwnDark) {
    // In the hue of the photo's own dark (grey, it read blue-grey against that warm dark: face-api
    // sample5 dark's 1.03 times her lips' warmth, her photo's own open mouth 1.53).
    for (let k = 0; k < 3; k++) out[k] = look.ownDarkHue[k]! * cavityLuma;
    greyer(out, cavityLuma, darkChroma(cavityLuma, look));
  } else {
    // No dark of the photo's own: the real cavity's colour on the dark's warm hue.
    warmDark(t, down, cavityLuma, look.darkHue, look, out);
  }
  // Towards the lips, their edge in shade, but never darker than the cavity there (a dark
  // line round a lighter dark read as an outline drawn round the opening).
  const towardsLip = look.lipEdgeLuma > cavityLuma ? near : 0;
  for (let k = 0; k < 3; k++) out[k] = lerp(out[k]!, look.lipEdge[k]!, towardsLip);
  // The tongue: a low mound rising from the floor of the mouth.
  if (look.tongue > 0) {
    const crest = bottom - height * 0.62 * look.tongue * Math.sqrt(Math.max(0, 1 - t * t * 1.3));
    const below = clamp((v - crest) / Math.max(1, bottom - crest), 0, 1);
    // Its top catches the light, its front (towards the lower lip) lies in shade; the whole in
    // the mouth's shade: no lighter than TONGUE_OVER_CAVITY times the dark around it. Its surface
    // mottled as the dark is (a smooth mound read as paint).
    const lit = 1 - TONGUE_FRONT_SHADE * smoothstep(TONGUE_LIT_TOP * 0.5, 1, below);
    const shade =
      Math.min(
        1,
        (TONGUE_OVER_CAVITY *
          (opening.inOwnDark ? Math.min(cavityLuma, look.ownDarkLuma) : cavityLuma)) /
          Math.max(1, look.tongueLuma),
      ) *
      lit *
      (1 + 0.5 * CAVITY_MOTTLE * mottleAt(px + 101, py));
    // With no dark of the photo's own, in the dark's warm hue (the real mouth's tongue is a
    // maroon lighter than its dark), not the lips' colour made grey, and as grey as the dark at
    // its luma (warmDark): at the hue's full chroma it was redder than the dark round it.
    const cover = clamp(v - crest + 0.5, 0, 1);
    if (opening.inOwnDark || look.greyDark) paint(look.tongueColour, cover, shade);
    else if (cover > 0) {
      warmDark(t, down, look.tongueLuma * shade, look.darkHue, look, TONGUE_COLOUR, false);
      paint(TONGUE_COLOUR as unknown as Colour, cover);
    }
  }
  // Lower teeth, in the shade of the upper lip: a real row of teeth, tips up.
  const lower = look.lowerTeeth * teethProfile(t);
  if (lower > 0) {
    realTeeth(t, (bottom - v) / lower, detail);
    paint(look.teeth, clamp(v - (bottom - lower) + 0.5, 0, 1), 0.68 * (1 - 0.3 * t * t), detail);
  }
  // The tongue's tip, between the teeth (th) or behind the upper teeth (l).
  if (look.tongueTip > 0) {
    const cv = top + look.upperTeeth * 0.7 + height * 0.3;
    const ru = 0.32 * look.tongueTip;
    const rv = Math.max(1, height * 0.32);
    const d = Math.hypot(t / ru, (v - cv) / rv);
    paint(look.tongueColour, clamp((1 - d) * rv + 0.5, 0, 1), 1.1);
  }
  // Upper teeth, just below the upper lip: a real row of teeth (their gaps, their tips' shade)
  // in the photo's teeth colour.
  const upper = synthesizedUpperTeeth(u, opening, look) * teethProfile(t);
  if (upper > 0) {
    const underLip = v - top < 1 ? 0.8 : 1;
    realTeeth(t, (v - top) / upper, detail);
    paint(look.teeth, clamp(top + upper - v + 0.5, 0, 1), (1 - 0.38 * t * t) * underLip, detail);
  }
  out[0] = (out[0] as number) * light;
  out[1] = (out[1] as number) * light;
  out[2] = (out[2] as number) * light;
}
