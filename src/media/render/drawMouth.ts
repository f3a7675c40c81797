// SPDX-License-Identifier: GPL-3.0-or-later
import {
  band,
  ellipse,
  intersect,
  stroke,
  type ImplicitShape,
  type Point,
} from './implicitShape.js';
import type { FaceDesign } from './faceDesign.js';
import { MOUTH } from './faceGeometry.js';
import type { MouthShape } from './mouthShape.js';
import { mix, shade, type Raster, type Rgb } from './raster.js';

const INNER_MOUTH: Rgb = [64, 22, 28];
const TEETH: Rgb = [246, 243, 236];
const TONGUE: Rgb = [204, 98, 106];

/** Draws lips, opening, teeth and tongue for one mouth shape (atlas-build time). */
export function drawMouth(r: Raster, d: FaceDesign, m: MouthShape): void {
  const { cx, cy } = MOUTH;
  const hw = m.halfWidth;
  const exponent = 0.5 + 0.5 * (1 - m.roundness);
  const u = (x: number): number => (x - cx) / hw;
  const profile = (x: number): number => Math.max(0, 1 - u(x) ** 2) ** exponent;
  const lift = (x: number): number => -m.smile * u(x) ** 2;
  const innerTop = (x: number): number => cy + lift(x) - m.openTop * profile(x);
  const innerBottom = (x: number): number => cy + lift(x) + m.openBottom * profile(x);
  // Cupid's bow: the upper lip is fullest either side of the centre, with a dip in the middle.
  const bow = (x: number): number => {
    const v = u(x);
    const base = Math.max(0, 1 - v * v) ** 0.55;
    return (
      base *
      (1 +
        0.14 * Math.exp(-(((Math.abs(v) - 0.3) / 0.17) ** 2)) -
        0.2 * Math.exp(-((v / 0.1) ** 2)))
    );
  };
  const upperLip = m.upperLip * d.lipFullness;
  const lowerLip = m.lowerLip * d.lipFullness;
  const outerTop = (x: number): number => innerTop(x) - upperLip * bow(x);
  const outerBottom = (x: number): number =>
    innerBottom(x) + lowerLip * Math.max(0, 1 - u(x) ** 2) ** 0.6;
  const x0 = cx - hw - 1;
  const x1 = cx + hw + 1;
  const yMin = cy - m.openTop - upperLip * 1.2 - Math.max(0, -m.smile) - 2;
  const yMax = cy + m.openBottom + lowerLip + Math.abs(m.smile) + 2;

  // Shadow under the lower lip gives the chin some depth (kept inside the mouth sprite).
  r.fill(ellipse(cx, Math.min(outerBottom(cx) + 5, 330), hw * 0.55, 4), d.skinShadow, {
    opacity: 0.4,
    feather: 5,
  });

  // Both lips as one shape first, so no skin shows through the seam where they meet.
  r.fill(band(x0, x1, outerTop, outerBottom, yMin, yMax), shade(d.lips, 0.93));

  const gap = m.openTop + m.openBottom;
  const opening: ImplicitShape = band(x0, x1, innerTop, innerBottom, yMin, yMax);
  if (gap > 0.3) {
    r.fill(opening, (_x, y) =>
      mix(shade(INNER_MOUTH, 0.7), INNER_MOUTH, (y - cy + m.openTop) / (gap + 1)),
    );
    if (m.tongue > 0) {
      const ry = Math.max(2, m.openBottom * 0.55);
      r.fill(ellipse(cx, innerBottom(cx) + ry * (1 - m.tongue) * 0.8, hw * 0.62, ry), TONGUE, {
        clip: opening,
        opacity: Math.min(1, m.tongue * 2),
      });
    }
    const teethPaint = (x: number): Rgb => mix(TEETH, shade(TEETH, 0.72), Math.abs(u(x)) ** 2);
    if (m.upperTeeth > 0 && m.teethOnLip < 0.5) {
      const teeth = band(
        x0,
        x1,
        innerTop,
        (x) => innerTop(x) + m.upperTeeth * profile(x) ** 0.3,
        yMin,
        yMax,
      );
      r.fill(teeth, teethPaint, { clip: opening });
    }
    if (m.lowerTeeth > 0) {
      const teeth = band(
        x0,
        x1,
        (x) => innerBottom(x) - m.lowerTeeth * profile(x) ** 0.3,
        innerBottom,
        yMin,
        yMax,
      );
      r.fill(teeth, (x) => shade(teethPaint(x), 0.92), { clip: opening });
    }
    if (m.tongueTip > 0) {
      const tipY =
        m.upperTeeth > 0 && m.lowerTeeth > 0 ? cy + 0.5 : innerTop(cx) + m.upperTeeth + 2;
      r.fill(ellipse(cx, tipY, 10 * m.tongueTip, 1.2 + 2.6 * m.tongueTip), shade(TONGUE, 1.05), {
        clip: opening,
      });
    }
    // The upper lip shades the top of the opening.
    r.fill(
      band(x0, x1, innerTop, (x) => innerTop(x) + 2.5, yMin, yMax),
      [0, 0, 0],
      {
        clip: opening,
        opacity: 0.25,
        feather: 2,
      },
    );
  }

  // Lips: the upper lip is in shadow, the lower lip catches the light.
  r.fill(band(x0, x1, outerTop, innerTop, yMin, yMax), shade(d.lips, 0.86));
  r.fill(band(x0, x1, innerBottom, outerBottom, yMin, yMax), d.lips);
  r.fill(
    ellipse(cx + 2, innerBottom(cx) + lowerLip * 0.45, hw * 0.32, Math.max(1, lowerLip * 0.18)),
    [255, 255, 255],
    {
      opacity: 0.22,
      feather: 3,
    },
  );

  if (m.teethOnLip > 0 && m.upperTeeth > 0) {
    // F and V: the upper teeth rest on the lower lip.
    const teeth = band(
      x0,
      x1,
      innerTop,
      (x) => innerTop(x) + m.upperTeeth * profile(x) ** 0.3,
      yMin,
      yMax,
    );
    const rounded = ellipse(cx, innerTop(cx), hw * 0.6, m.upperTeeth + 1.5);
    r.fill(intersect(teeth, rounded), (x) => mix(TEETH, shade(TEETH, 0.8), Math.abs(u(x)) * 1.4), {
      opacity: m.teethOnLip,
    });
  }

  // The line where the lips meet, fading out as the mouth opens; small creases at the corners.
  const meet: Point[] = [];
  for (let i = 0; i <= 24; i++) {
    const x = cx - hw + (2 * hw * i) / 24;
    meet.push([x, (innerTop(x) + innerBottom(x)) / 2]);
  }
  r.fill(stroke(meet, 0.7, 1.1, 0.7), d.lipLine, { opacity: Math.max(0, 1 - gap / 3) });
  for (const side of [-1, 1]) {
    const cornerX = cx + side * hw;
    const cornerY = cy - m.smile;
    const crease: Point[] = [
      [cornerX - side * 2, cornerY],
      [cornerX + side * 3, cornerY - 1.5 - m.smile * 0.3],
    ];
    r.fill(stroke(crease, 0.8, 0.7, 0.3), d.lipLine, { opacity: 0.3 });
  }
}
