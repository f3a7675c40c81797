// SPDX-License-Identifier: GPL-3.0-or-later
// The mouth of a photo avatar as a viewer sees it (issue 31, part 3): figures measured on its
// rendered frames by a face detector and face recognition, and a contact sheet of its frames.
// Shared by test/media/photo/photoMouth.slow.test.ts and `npm run bench -- photo`.
import sharp, { type OverlayOptions } from 'sharp';
import {
  i420ToRgb,
  renderStill,
  type AvatarAtlas,
  type StillPose,
} from '../../../src/media/render/index.js';
import {
  chinShiftShare,
  describeFrame,
  describeImage,
  faceDistance,
  innerMouthBands,
  lumaOf,
  upperTeethHeight,
} from '../../support/faceQuality.js';
import { portraitAtlas } from '../../support/builtPortraits.js';
import { upCloseFigures, upCloseRow, type UpCloseFigures } from '../../support/mouthUpClose.js';

/** The widest-open frame: AA (the widest jaw of every shape) at full openness. */
export const WIDEST: StillPose = { mouth: { viseme: 'AA', openness: 1 } };
/** The frames of a contact sheet: rest, open, rounded, a bilabial, blink. */
export const SHEET_POSES: [string, StillPose][] = [
  ['rest', {}],
  ['open (AA)', WIDEST],
  ['rounded (O)', { mouth: { viseme: 'O', openness: 1 } }],
  ['rounded (U)', { mouth: { viseme: 'U', openness: 1 } }],
  // As a session shows an m, b or p: the closure's openness while the vowel before it releases.
  ['bilabial (MBP)', { mouth: { viseme: 'MBP', openness: 0.4 } }],
  ['blink', { lid: 1 }],
];

export interface MouthFigures {
  /**
   * Face-recognition distance of the widest-open frame to the photo as given, each face aligned
   * as the recognition net was trained on it (faceQuality.ts, alignedChip).
   */
  identity: number;
  /**
   * The same distance on face-api's own descriptors (the detector's box as it stands), for the
   * record: it measures a tilt, a border or a tighter crop as much as the person.
   */
  identityUnaligned: number;
  /** Chin drop at the widest opening, share of the nose-to-chin height. */
  chinDrop: number;
  /** Mean luma of the inner mouth's top band (under the upper lip) and of its middle. */
  top: number;
  middle: number;
  /** Upper teeth under the upper lip, px: at rest and in the widest-open frame. */
  teethAtRest: number;
  teethOpen: number;
  /** The widest-open frame up close (issue 43): flat pixels, edge steepness, dark saturation. */
  upClose: UpCloseFigures;
}

export interface BuiltPortrait {
  atlas: AvatarAtlas;
  /** The detected face's box in the rest frame (for the contact sheet's crop). */
  face: { x: number; y: number; width: number; height: number };
  figures: MouthFigures;
}

/**
 * The detector's score a face needs here: the build's own (it finds faces from 0.2; close-ups
 * score low: Walter White's photo, glasses and a close-up, scores between 0.25 and 0.3, and its
 * rest frame between 0.2 and 0.25).
 */
const MIN_CONFIDENCE = 0.2;

const frameLuma = (i420: Uint8Array) => lumaOf(i420ToRgb({ width: 512, height: 512, data: i420 }));

/**
 * Builds a photo avatar from `bytes` (the real build, once per run: test/support/builtPortraits.ts)
 * and measures its mouth.
 */
export async function measurePortrait(bytes: Uint8Array): Promise<BuiltPortrait> {
  const { atlas, output } = await portraitAtlas(bytes);
  // The person of the photo: of the faces found in it, the one nearest the avatar's (a crop of a
  // group photo may hold part of a neighbour, and a rotated picture a false find at a low score).
  // The photo as given: a head the build turned upright is compared with its tilted self, the
  // alignment turning both alike.
  const faces = await describeImage(bytes, MIN_CONFIDENCE);
  const restFrame = renderStill(atlas);
  const openFrame = renderStill(atlas, WIDEST);
  const [rest] = await describeFrame(restFrame, MIN_CONFIDENCE);
  const [open] = await describeFrame(openFrame, MIN_CONFIDENCE);
  const photo = rest
    ? faces.sort(
        (a, b) =>
          faceDistance(a.alignedDescriptor, rest.alignedDescriptor) -
          faceDistance(b.alignedDescriptor, rest.alignedDescriptor),
      )[0]
    : undefined;
  const missing = [!photo && 'the photo', !rest && 'the rest frame', !open && 'the open frame'];
  if (!photo || !rest || !open) {
    throw new Error(`face recognition found no face in ${missing.filter(Boolean).join(', ')}`);
  }
  const openRgb = i420ToRgb({ width: 512, height: 512, data: openFrame });
  const openLuma = lumaOf(openRgb);
  const restLuma = frameLuma(restFrame);
  // What lies inside the lips (the bands, the teeth, up close) is measured along the lips the
  // detector finds on the same frame with the dark grey as it was drawn before (the same luma):
  // where it places them on the colour frame moves with the inside's colour alone (a warm dark
  // moved Sean Connery's and sample5 turned's inner lips, and their top band, with every pixel's
  // luma unchanged; mouthUpClose.ts, upCloseFigures). The build drew that frame to aim the
  // dark's warmth (PhotoBuildOutput's `aimFrame`: the widest-open frame, the same bytes as a
  // whole build with the dark grey renders it).
  if (!output.aimFrame) throw new Error('the build drew no grey-dark open frame (it did not aim)');
  const [reference] = await describeFrame(output.aimFrame, MIN_CONFIDENCE);
  if (!reference) throw new Error('face recognition found no face in the grey-dark open frame');
  const bands = innerMouthBands(openLuma, 512, reference.landmarks);
  const upClose = upCloseFigures(openRgb, 512, 512, reference.landmarks);
  return {
    atlas,
    face: rest.box,
    figures: {
      identity: faceDistance(photo.alignedDescriptor, open.alignedDescriptor),
      identityUnaligned: faceDistance(photo.descriptor, open.descriptor),
      chinDrop: chinShiftShare(restLuma, openLuma, 512, 512, rest.landmarks),
      top: bands.top,
      middle: bands.middle,
      teethAtRest: upperTeethHeight(restLuma, 512, rest.landmarks),
      teethOpen: upperTeethHeight(openLuma, 512, reference.landmarks),
      upClose,
    },
  };
}

/** The goals of issue 31 for one portrait's figures: what fails, in words (empty: all met). */
export function mouthFailures(f: MouthFigures): string[] {
  const failures: string[] = [];
  if (!(f.identity < 0.35)) failures.push(`identity ${f.identity.toFixed(3)} (goal < 0.35)`);
  if (!(f.chinDrop >= 0.04)) {
    failures.push(`chin drop ${(f.chinDrop * 100).toFixed(1)} % (goal >= 4 %)`);
  }
  if (!(f.top > f.middle)) {
    failures.push(
      `inner mouth top band ${f.top.toFixed(0)} not brighter than ${f.middle.toFixed(0)}`,
    );
  }
  if (f.teethAtRest >= 2 && !(f.teethOpen >= 0.6 * f.teethAtRest)) {
    failures.push(
      `upper teeth ${f.teethOpen.toFixed(1)} px open of ${f.teethAtRest.toFixed(1)} at rest (goal >= 60 %)`,
    );
  }
  return failures;
}

/** One row of the printed table. */
export function figuresRow(f: MouthFigures): Record<string, string> {
  return {
    'identity (< 0.35)': f.identity.toFixed(3),
    'unaligned (record)': f.identityUnaligned.toFixed(3),
    'chin drop (>= 4 %)': `${(f.chinDrop * 100).toFixed(1)} %`,
    'inner mouth top / middle': `${f.top.toFixed(0)} / ${f.middle.toFixed(0)}`,
    'upper teeth rest / open, px': `${f.teethAtRest.toFixed(1)} / ${f.teethOpen.toFixed(1)}`,
    ...upCloseRow(f.upClose),
  };
}

/**
 * A contact sheet: one row per portrait (its name above), the face cropped from each of
 * SHEET_POSES' frames, `tile` px square.
 */
export async function contactSheet(
  rows: { name: string; built: BuiltPortrait }[],
  tile = 200,
  { mouth = false }: { mouth?: boolean } = {},
): Promise<Buffer> {
  const label = 18;
  const composites: OverlayOptions[] = [];
  const rowHeight = tile + label;
  for (let r = 0; r < rows.length; r++) {
    const { name, built } = rows[r]!;
    const { x, y, width, height } = built.face;
    // The face, or (mouth) the mouth and chin: a square a little over half the face wide.
    const side = Math.min(512, Math.round(Math.max(width, height) * (mouth ? 0.55 : 1.25)));
    const left = Math.max(0, Math.min(512 - side, Math.round(x + width / 2 - side / 2)));
    const centreY = mouth ? y + 0.8 * height : y + height / 2 + 0.08 * side;
    const top = Math.max(0, Math.min(512 - side, Math.round(centreY - side / 2)));
    composites.push({
      input: textLine(`${name}`, tile * SHEET_POSES.length, label),
      left: 0,
      top: r * rowHeight,
    });
    for (let c = 0; c < SHEET_POSES.length; c++) {
      const [pose, still] = SHEET_POSES[c]!;
      const rgb = i420ToRgb({ width: 512, height: 512, data: renderStill(built.atlas, still) });
      const image = await sharp(Buffer.from(rgb), { raw: { width: 512, height: 512, channels: 3 } })
        .extract({ left, top, width: side, height: side })
        .resize(tile, tile, { kernel: 'lanczos3' })
        .composite([{ input: textLine(pose, tile, 16, 0.7), left: 0, top: tile - 16 }])
        .png()
        .toBuffer();
      composites.push({ input: image, left: c * tile, top: r * rowHeight + label });
    }
  }
  return sharp({
    create: {
      width: tile * SHEET_POSES.length,
      height: rows.length * rowHeight,
      channels: 3,
      background: '#ffffff',
    },
  })
    .composite(composites)
    .png()
    .toBuffer();
}

function textLine(text: string, width: number, height: number, opacity = 1): Buffer {
  const escaped = text.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  return Buffer.from(
    `<svg width="${width}" height="${height}"><rect width="${width}" height="${height}" fill="white" fill-opacity="${opacity}"/><text x="4" y="${height - 4}" font-family="sans-serif" font-size="${height - 5}">${escaped}</text></svg>`,
  );
}
