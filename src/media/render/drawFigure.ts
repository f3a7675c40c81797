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
  union,
  type ImplicitShape,
  type Point,
} from './implicitShape.js';
import type { FaceDesign } from './faceDesign.js';
import { EYES, FRAME_HEIGHT, FRAME_WIDTH, HEAD } from './faceGeometry.js';
import { mix, shade, type Raster, type Rgb } from './raster.js';

/**
 * Everything but the eyes and the mouth, in layers that move differently: the background stays,
 * the body rises and falls with breathing, the head (and the hair) also sways.
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

/** Hair behind the head and neck (long hair, a bob). */
export function drawHairBack(r: Raster, d: FaceDesign): void {
  const paint = hairPaint(d);
  if (d.hairStyle === 'long-side-part') {
    const mass = smoothUnion(
      30,
      ellipse(256, 212, 130, 146),
      roundedRect(256 - 132, 200, 256 + 132, 452, 60),
    );
    r.fill(mass, (x, y) => shade(paint(x, y), 0.8));
  } else if (d.hairStyle === 'bob-with-bangs') {
    const mass = smoothUnion(
      24,
      ellipse(256, 214, 132, 142),
      roundedRect(256 - 134, 210, 256 + 134, 352, 40),
    );
    r.fill(mass, (x, y) => shade(paint(x, y), 0.78));
  }
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
  const paint = hairPaint(d);
  if (d.hairStyle === 'long-side-part') {
    const cap = ellipse(256, 214, 117, 138);
    const face = union(ellipse(266, 268, 94, 126), ellipse(256, 300, 80, 80));
    r.fill(subtract(cap, face), paint);
    // The side-swept fringe, from the parting across the forehead.
    const sweep = stroke(quadratic([214, 104], [262, 150], [352, 196], 24), 10, 24, 8);
    r.fill(intersect(sweep, cap), paint);
    // Long locks falling in front of the shoulders.
    for (const side of [-1, 1]) {
      const lock = stroke(
        quadratic([256 + side * 100, 170], [256 + side * 122, 300], [256 + side * 112, 430], 20),
        16,
        24,
        14,
      );
      r.fill(subtract(lock, face), paint);
    }
    r.fill(
      stroke(quadratic([214, 104], [200, 90], [180, 96], 8), 1.2, 1.2, 0.6),
      shade(d.hair, 0.7),
      {
        opacity: 0.6,
      },
    );
    // Strands: away from the parting on the crown, then down the locks.
    const strands: [Point, Point, Point][] = [
      [
        [212, 108],
        [176, 118],
        [156, 170],
      ],
      [
        [216, 112],
        [190, 132],
        [176, 190],
      ],
      [
        [222, 108],
        [270, 112],
        [318, 150],
      ],
      [
        [226, 114],
        [280, 128],
        [336, 176],
      ],
      [
        [150, 230],
        [136, 320],
        [146, 420],
      ],
      [
        [164, 240],
        [152, 330],
        [160, 410],
      ],
      [
        [362, 230],
        [376, 320],
        [366, 420],
      ],
      [
        [348, 240],
        [362, 330],
        [352, 410],
      ],
    ];
    for (const [a, c, b] of strands) {
      r.fill(stroke(quadratic(a, c, b, 16), 0.5, 1.1, 0.4), d.hairHighlight, {
        opacity: 0.4,
        mask: face,
      });
    }
  } else if (d.hairStyle === 'short-quiff') {
    const cap = smoothUnion(16, ellipse(256, 202, 113, 118), ellipse(238, 110, 72, 34));
    const face = smoothUnion(20, ellipse(256, 264, 100, 118), ellipse(256, 192, 78, 48));
    r.fill(subtract(cap, face), paint);
    // A few strands give the quiff direction.
    for (const [a, c, b] of [
      [
        [190, 140],
        [214, 100],
        [262, 88],
      ],
      [
        [214, 150],
        [236, 108],
        [290, 96],
      ],
      [
        [250, 146],
        [270, 110],
        [318, 112],
      ],
    ] as [Point, Point, Point][]) {
      r.fill(stroke(quadratic(a, c, b, 16), 0.8, 1.6, 0.6), d.hairHighlight, {
        opacity: 0.55,
        clip: cap,
      });
    }
  } else {
    const cap = ellipse(256, 212, 124, 136);
    const sides = roundedRect(256 - 126, 200, 256 + 126, 350, 34);
    const face = intersect(
      ellipse(256, 268, 95, 132),
      below((x) => 184 + 0.0016 * (x - 256) ** 2, 140, 372, 420),
    );
    r.fill(subtract(smoothUnion(20, cap, sides), face), paint);
    // Strands in the fringe.
    for (const x of [206, 232, 258, 284, 308]) {
      r.fill(
        stroke(
          [
            [x + 4, 120],
            [x, 182],
          ],
          0.6,
          1,
          0.4,
        ),
        shade(d.hair, 0.6),
        { opacity: 0.5 },
      );
    }
  }

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

function hairPaint(d: FaceDesign): (x: number, y: number) => Rgb {
  // A soft sheen band following the crown.
  return (x, y) => {
    const crown = 140 + 0.004 * (x - 236) ** 2;
    const sheen = 0.55 * Math.exp(-(((y - crown) / 16) ** 2));
    return mix(d.hair, d.hairHighlight, sheen);
  };
}
