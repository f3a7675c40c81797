// SPDX-License-Identifier: GPL-3.0-or-later
import {
  below,
  ellipse,
  intersect,
  quadratic,
  roundedRect,
  smoothUnion,
  stroke,
  subtract,
  union,
  type Point,
} from './implicitShape.js';
import type { FaceDesign } from './faceDesign.js';
import { mix, shade, type Raster, type Rgb } from './raster.js';

/**
 * The hair, per hair style: its mass behind the head and neck (drawn before the body), and what
 * falls in front of the face (drawn after the eyes and mouth), with one sheen for both.
 */

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

/** Hair in front of the face (the fringe, locks, strands). Drawn after the eyes and mouth. */
export function drawHairFront(r: Raster, d: FaceDesign): void {
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
}

function hairPaint(d: FaceDesign): (x: number, y: number) => Rgb {
  // A soft sheen band following the crown.
  return (x, y) => {
    const crown = 140 + 0.004 * (x - 236) ** 2;
    const sheen = 0.55 * Math.exp(-(((y - crown) / 16) ** 2));
    return mix(d.hair, d.hairHighlight, sheen);
  };
}
