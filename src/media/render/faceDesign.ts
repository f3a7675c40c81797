// SPDX-License-Identifier: GPL-3.0-or-later
import type { Rgb } from './raster.js';

/**
 * What makes one avatar look like itself: palette, hair style, clothes, accessories. The geometry
 * of the face (where eyes, nose and mouth sit) is shared (`faceGeometry.ts`), so that every
 * avatar's sprites line up with the same rectangles.
 */
export interface FaceDesign {
  readonly background: { readonly top: Rgb; readonly bottom: Rgb; readonly glow: Rgb };
  readonly skin: Rgb;
  readonly skinShadow: Rgb;
  readonly blush: Rgb;
  readonly blushOpacity: number;
  readonly hair: Rgb;
  readonly hairHighlight: Rgb;
  readonly hairStyle: 'long-side-part' | 'short-quiff' | 'bob-with-bangs';
  readonly iris: Rgb;
  readonly brow: Rgb;
  /** Half-thickness of the brows at their widest, px. */
  readonly browWeight: number;
  readonly lashes: boolean;
  readonly lips: Rgb;
  readonly lipLine: Rgb;
  /** Lip thickness scale (1 = default). */
  readonly lipFullness: number;
  readonly top: Rgb;
  readonly topAccent: Rgb;
  readonly topStyle: 'v-neck' | 'polo-collar' | 'cardigan';
  readonly glasses?: Rgb;
  /** Face width scale (1 = default). */
  readonly faceWidth: number;
  /** Jaw squareness: the exponent of the lower face's superellipse (2 round, 3+ square). */
  readonly jaw: number;
  /** Half-width of the neck, px. */
  readonly neck: number;
  /** Opacity of a shaved-beard shadow on jaw, chin and upper lip (0 for none). */
  readonly stubble: number;
}

export const ADA_DESIGN: FaceDesign = {
  background: { top: [242, 214, 196], bottom: [214, 160, 140], glow: [255, 236, 220] },
  skin: [241, 200, 172],
  skinShadow: [214, 160, 133],
  blush: [235, 130, 125],
  blushOpacity: 0.28,
  hair: [52, 34, 30],
  hairHighlight: [96, 64, 54],
  hairStyle: 'long-side-part',
  iris: [92, 62, 40],
  brow: [58, 38, 32],
  browWeight: 3.4,
  lashes: true,
  lips: [196, 96, 98],
  lipLine: [120, 50, 56],
  lipFullness: 1.1,
  top: [196, 82, 70],
  topAccent: [160, 58, 50],
  topStyle: 'v-neck',
  faceWidth: 0.97,
  jaw: 2.5,
  neck: 37,
  stubble: 0,
};

export const MILO_DESIGN: FaceDesign = {
  background: { top: [196, 222, 226], bottom: [120, 168, 182], glow: [226, 244, 244] },
  skin: [226, 176, 138],
  skinShadow: [194, 140, 104],
  blush: [218, 126, 100],
  blushOpacity: 0.14,
  hair: [128, 84, 44],
  hairHighlight: [170, 118, 66],
  hairStyle: 'short-quiff',
  iris: [64, 110, 150],
  brow: [104, 68, 38],
  browWeight: 3.9,
  lashes: false,
  lips: [184, 112, 96],
  lipLine: [116, 64, 54],
  lipFullness: 0.9,
  top: [52, 96, 150],
  topAccent: [236, 240, 244],
  topStyle: 'polo-collar',
  faceWidth: 1.03,
  jaw: 3.1,
  neck: 46,
  stubble: 0.13,
};

export const NOOR_DESIGN: FaceDesign = {
  background: { top: [222, 214, 236], bottom: [168, 154, 200], glow: [242, 236, 250] },
  skin: [164, 112, 82],
  skinShadow: [130, 84, 60],
  blush: [176, 84, 76],
  blushOpacity: 0.2,
  hair: [36, 26, 26],
  hairHighlight: [78, 56, 50],
  hairStyle: 'bob-with-bangs',
  iris: [58, 38, 26],
  brow: [40, 28, 26],
  browWeight: 3.1,
  lashes: true,
  lips: [150, 72, 80],
  lipLine: [88, 40, 46],
  lipFullness: 1.05,
  top: [214, 170, 72],
  topAccent: [244, 236, 220],
  topStyle: 'cardigan',
  glasses: [60, 44, 40],
  faceWidth: 1,
  jaw: 2.6,
  neck: 38,
  stubble: 0,
};
