// SPDX-License-Identifier: GPL-3.0-or-later
import { describe, expect, it } from 'vitest';
import { splineKernels, ThinPlateSpline, type Vec } from '../../../src/media/photo/warp.js';

describe('ThinPlateSpline with kernels computed beforehand', () => {
  // A sprite's border held fixed, then moved points inside (as the mouth sprites' warp).
  const fixed: Vec[] = [];
  for (let x = 100; x <= 240; x += 14) fixed.push({ x, y: 300 }, { x, y: 420 });
  for (let y = 314; y < 420; y += 14) fixed.push({ x: 100, y }, { x: 240, y });
  const targets = [...fixed, { x: 150, y: 360 }, { x: 170, y: 372 }, { x: 195, y: 361 }];
  const sources = [...fixed, { x: 151, y: 355 }, { x: 170, y: 365 }, { x: 193, y: 357 }];
  const points: Vec[] = [];
  for (let y = 300.5; y < 421; y += 3) for (let x = 100.5; x < 241; x += 3) points.push({ x, y });

  it('maps every point to the same numbers as without them', () => {
    const spline = new ThinPlateSpline(targets, sources, 47.3, 2e-4);
    const known = splineKernels(fixed, points, 47.3);
    const plain: Vec = { x: 0, y: 0 };
    const fast: Vec = { x: 0, y: 0 };
    let moved = 0;
    points.forEach((p, k) => {
      spline.map(p.x, p.y, plain);
      spline.map(p.x, p.y, fast, known, k);
      expect(fast).toEqual(plain);
      if (Math.hypot(plain.x - p.x, plain.y - p.y) > 0.5) moved++;
    });
    // The warp moves the inside (the comparison is not of two identities).
    expect(moved).toBeGreaterThan(20);
  });

  it('is a different map with the kernels of other points', () => {
    const spline = new ThinPlateSpline(targets, sources, 47.3, 2e-4);
    const known = splineKernels(fixed, points, 47.3);
    const plain = spline.map(170.5, 366.5, { x: 0, y: 0 });
    const k = points.findIndex((p) => p.x === 100.5 && p.y === 300.5);
    expect(spline.map(170.5, 366.5, { x: 0, y: 0 }, known, k)).not.toEqual(plain);
  });
});
