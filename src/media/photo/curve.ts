// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * A smooth curve v(u) through points sorted by u (Catmull-Rom between them, straight beyond the
 * ends): lid and lip contours from a handful of landmarks.
 */
export class Curve {
  private readonly us: number[];
  private readonly vs: number[];

  constructor(points: readonly { u: number; v: number }[]) {
    const sorted = [...points].sort((a, b) => a.u - b.u);
    // Points at (almost) the same u would make the curve vertical there: keep the first.
    const us: number[] = [];
    const vs: number[] = [];
    for (const p of sorted) {
      if (us.length > 0 && p.u - (us[us.length - 1] as number) < 1e-3) continue;
      us.push(p.u);
      vs.push(p.v);
    }
    if (us.length < 2) throw new RangeError('a curve needs two distinct points');
    this.us = us;
    this.vs = vs;
  }

  get first(): number {
    return this.us[0] as number;
  }

  get last(): number {
    return this.us[this.us.length - 1] as number;
  }

  at(u: number): number {
    const { us, vs } = this;
    const n = us.length;
    if (u <= (us[0] as number)) return vs[0] as number;
    if (u >= (us[n - 1] as number)) return vs[n - 1] as number;
    let i = 0;
    while (u > (us[i + 1] as number)) i++;
    const u0 = us[i] as number;
    const u1 = us[i + 1] as number;
    const t = (u - u0) / (u1 - u0);
    const p1 = vs[i] as number;
    const p2 = vs[i + 1] as number;
    // Tangents from the neighbours (one-sided at the ends), scaled to this interval.
    const m1 =
      i > 0 ? ((p2 - (vs[i - 1] as number)) / (u1 - (us[i - 1] as number))) * (u1 - u0) : p2 - p1;
    const m2 =
      i + 2 < n
        ? (((vs[i + 2] as number) - p1) / ((us[i + 2] as number) - u0)) * (u1 - u0)
        : p2 - p1;
    const t2 = t * t;
    const t3 = t2 * t;
    return (
      (2 * t3 - 3 * t2 + 1) * p1 + (t3 - 2 * t2 + t) * m1 + (-2 * t3 + 3 * t2) * p2 + (t3 - t2) * m2
    );
  }
}
