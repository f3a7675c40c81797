// SPDX-License-Identifier: GPL-3.0-or-later
import {
  below,
  ellipse,
  egg,
  intersect,
  polygon,
  quadratic,
  roundedRect,
  smoothUnion,
  stroke,
  subtract,
  type ImplicitShape,
} from './implicitShape.js';
import type { FaceDesign } from './faceDesign.js';
import { EYES, FRAME_HEIGHT, FRAME_WIDTH, HEAD } from './faceGeometry.js';
import { drawHairFront } from './drawHair.js';
import { mix, shade, type Raster, type Rgb } from './raster.js';

/**
 * Everything but the eyes, the mouth and the hair (drawHair.ts), in layers that move differently:
 * the background stays, the body rises and falls with breathing, the head (and the hair) also
 * sways.
 */

export function drawBackground(r: Raster, d: FaceDesign): void {
  const { top, bottom, glow } = d.background;
  r.fill(roundedRect(-4, -4, FRAME_WIDTH + 4, FRAME_HEIGHT + 4, 0), (x, y) => {
    const base = mix(top, bottom, y / FRAME_HEIGHT);
    const g = Math.exp(-((x - 256) ** 2 + (y - 190) ** 2) / (2 * 165 ** 2));
    return mix(base, glow, g * 0.6);
  });
}

export function headShape(d: FaceDesign): ImplicitShape {
  return egg(HEAD.cx, HEAD.cy, HEAD.rx * d.faceWidth, HEAD.ryTop, HEAD.ryBottom, d.jaw);
}

/** Neck, shoulders and clothes. */
export function drawBody(r: Raster, d: FaceDesign): void {
  const neck = roundedRect(256 - d.neck, 290, 256 + d.neck, 450, 18);
  r.fill(neck, (_x, y) => mix(d.skinShadow, d.skin, Math.min(1, Math.max(0, (y - 360) / 60))));
  // Shadow cast by the jaw.
  r.fill(ellipse(256, 366, 50, 20), shade(d.skinShadow, 0.85), {
    clip: neck,
    opacity: 0.6,
    feather: 10,
  });

  const torso = smoothUnion(40, ellipse(256, 575, 222, 160), roundedRect(120, 440, 392, 600, 40));
  const clothes = (x: number, y: number): Rgb => {
    const side = Math.abs(x - 256) / 220;
    const light = 1.06 - 0.22 * side ** 2 - 0.08 * Math.max(0, (y - 440) / 80);
    return shade(d.top, light);
  };

  if (d.topStyle === 'v-neck') {
    r.fill(torso, clothes);
    const vee = polygon([
      [256 - 46, 408],
      [256 + 46, 408],
      [256, 486],
    ]);
    r.fill(vee, (_x, y) => mix(d.skinShadow, d.skin, Math.min(1, (y - 410) / 30)), { clip: torso });
    for (const side of [-1, 1]) {
      r.fill(
        stroke(
          [
            [256 + side * 46, 414],
            [256, 488],
          ],
          2.2,
          2.2,
          2.2,
        ),
        d.topAccent,
        {
          clip: torso,
        },
      );
    }
  } else if (d.topStyle === 'polo-collar') {
    r.fill(torso, clothes);
    // Collar band round the neck, then the two flaps and the placket.
    r.fill(
      intersect(
        ellipse(256, 432, 62, 30),
        below((x) => 404 + 0 * x, 150, 362, 470),
      ),
      shade(d.top, 0.8),
    );
    for (const side of [-1, 1]) {
      const flap = polygon([
        [256 + side * 6, 468],
        [256 + side * 58, 418],
        [256 + side * 40, 404],
        [256 + side * 2, 440],
      ]);
      r.fill(flap, shade(d.top, 1.12));
      r.fill(
        stroke(
          [
            [256 + side * 6, 468],
            [256 + side * 58, 418],
          ],
          1,
          1,
          1,
        ),
        shade(d.top, 0.7),
        {
          opacity: 0.7,
        },
      );
    }
    r.fill(roundedRect(252, 460, 260, 560, 2), shade(d.top, 0.85));
    for (const y of [476, 496]) r.fill(ellipse(256, y, 3.2, 3.2), d.topAccent);
  } else {
    // Cardigan over a light crew-neck top.
    r.fill(torso, (x, y) =>
      shade(d.topAccent, 1 - 0.08 * (Math.abs(x - 256) / 220) - 0.03 * ((y - 420) / 80)),
    );
    r.fill(
      subtract(ellipse(256, 414, 52, 26), ellipse(256, 404, 44, 20)),
      shade(d.topAccent, 0.9),
      {
        clip: torso,
      },
    );
    for (const side of [-1, 1]) {
      const front = polygon([
        [256 + side * 44, 420],
        [256 + side * 12, 560],
        [256 + side * 300, 560],
        [256 + side * 300, 380],
      ]);
      r.fill(intersect(front, torso), clothes);
      r.fill(
        stroke(
          [
            [256 + side * 44, 420],
            [256 + side * 11, 560],
          ],
          3,
          3,
          3,
        ),
        shade(d.top, 0.82),
        {
          clip: torso,
        },
      );
    }
    for (const y of [472, 502]) r.fill(ellipse(256 - 26, y, 3.6, 3.6), shade(d.top, 0.6));
  }
}

/** Ears, the face's skin with its shading, nose and cheeks: what the eye and mouth sprites sit on. */
export function drawHeadBase(r: Raster, d: FaceDesign): void {
  const earX = HEAD.rx * d.faceWidth - 4;
  for (const side of [-1, 1]) {
    r.fill(ellipse(256 + side * earX, 240, 14, 24), d.skin);
    r.fill(ellipse(256 + side * (earX + 2), 241, 7, 15), d.skinShadow, {
      opacity: 0.55,
      feather: 3,
    });
  }
  const head = headShape(d);
  const rx = HEAD.rx * d.faceWidth;
  r.fill(head, (x, y) => {
    const nx = (x - HEAD.cx) / rx;
    const ny = (y - HEAD.cy) / HEAD.ryTop;
    const edge = Math.max(0, nx * nx + ny * ny * 0.7 - 0.35);
    return mix(d.skin, d.skinShadow, Math.min(0.7, edge * 0.9 + Math.max(0, nx) * 0.12));
  });

  // Nose: a shadow down one side, a lit tip, nostrils and the curve of its base.
  r.fill(stroke(quadratic([265, 234], [270, 258], [267, 276], 10), 2, 3, 2), d.skinShadow, {
    opacity: 0.35,
    feather: 6,
  });
  r.fill(ellipse(254, 272, 9, 7), shade(d.skin, 1.15), { opacity: 0.35, feather: 6 });
  for (const side of [-1, 1]) {
    r.fill(ellipse(256 + side * 8, 284, 4, 2.3), shade(d.skinShadow, 0.6), {
      opacity: 0.6,
      feather: 1.5,
    });
  }
  r.fill(
    stroke(quadratic([241, 278], [256, 294], [271, 278], 14), 0.9, 1.2, 0.9),
    shade(d.skinShadow, 0.75),
    {
      opacity: 0.45,
      feather: 1.5,
    },
  );
  // Philtrum and chin.
  r.fill(ellipse(256, 296, 5, 6), d.skinShadow, { opacity: 0.25, feather: 4 });
  r.fill(ellipse(256, 346, 18, 7), shade(d.skin, 1.1), { opacity: 0.3, feather: 6 });
  if (d.stubble > 0) {
    // Shaved beard: a cool shadow over the jaw and chin and above the upper lip.
    const beard = subtract(
      intersect(
        head,
        below(() => 262, 120, 392, 380),
      ),
      ellipse(256, 262, 74, 40),
    );
    r.fill(beard, [96, 84, 80], { opacity: d.stubble, feather: 10 });
    r.fill(ellipse(256, 298, 34, 8), [96, 84, 80], { opacity: d.stubble * 0.8, feather: 6 });
  }
  // Cheeks.
  for (const side of [-1, 1]) {
    r.fill(ellipse(256 + side * 60, 276, 22, 13), d.blush, {
      opacity: d.blushOpacity,
      feather: 16,
    });
  }
}

/** Hair in front of the face, and glasses. Drawn after the eyes and mouth. */
export function drawHeadFront(r: Raster, d: FaceDesign): void {
  drawHairFront(r, d);
  if (d.glasses) drawGlasses(r, d.glasses);
}

function drawGlasses(r: Raster, frame: Rgb): void {
  for (const side of [-1, 1]) {
    const ex = HEAD.cx + side * EYES.dx;
    const outer = roundedRect(ex - 29, EYES.y - 22, ex + 29, EYES.y + 20, 17);
    const inner = roundedRect(ex - 26, EYES.y - 19, ex + 26, EYES.y + 17, 14);
    r.fill(inner, [255, 255, 255], { opacity: 0.06 });
    r.fill(
      stroke(
        [
          [ex - 14, EYES.y - 12],
          [ex - 4, EYES.y - 16],
        ],
        1.6,
        1.6,
        1.6,
      ),
      [255, 255, 255],
      { opacity: 0.35, clip: inner },
    );
    r.fill(subtract(outer, inner), frame);
    r.fill(
      stroke(
        [
          [ex + side * 28, EYES.y - 12],
          [256 + side * 100, EYES.y - 8],
        ],
        2,
        2,
        1.5,
      ),
      frame,
    );
  }
  r.fill(
    stroke(
      quadratic([256 - 17, EYES.y - 8], [256, EYES.y - 15], [256 + 17, EYES.y - 8], 10),
      2,
      2,
      2,
    ),
    frame,
  );
}
