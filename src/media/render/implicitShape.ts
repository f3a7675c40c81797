// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * Shapes as implicit functions: `f(x, y) < 0` inside, `> 0` outside, zero on the edge. They need
 * not be exact distances: the raster divides by the gradient to get a distance in pixels for
 * anti-aliasing. Used only when an avatar's atlas is drawn (once per process), never per frame.
 */
export interface ImplicitShape {
  /** World-space bounds [x0, y0, x1, y1] outside which the shape is certainly empty. */
  readonly bounds: readonly [number, number, number, number];
  readonly f: (x: number, y: number) => number;
}

export type Point = readonly [number, number];

/**
 * Rescales a level-set function to approximate pixel distance (f / |grad f|, by central
 * differences), so that shapes of different kinds combine sensibly in unions and blends.
 */
export function inPixels(f: (x: number, y: number) => number): (x: number, y: number) => number {
  return (x, y) => {
    const v = f(x, y);
    const gx = f(x + 0.5, y) - f(x - 0.5, y);
    const gy = f(x, y + 0.5) - f(x, y - 0.5);
    const g = Math.hypot(gx, gy);
    return g > 1e-9 ? v / g : v * 1e3;
  };
}

export function ellipse(cx: number, cy: number, rx: number, ry: number): ImplicitShape {
  return {
    bounds: [cx - rx - 2, cy - ry - 2, cx + rx + 2, cy + ry + 2],
    // First-order distance: (k - 1) / |grad k| with k the normalised radius, in closed form.
    f: (x, y) => {
      const u = (x - cx) / rx;
      const v = (y - cy) / ry;
      const k = Math.hypot(u, v);
      if (k < 1e-9) return -Math.min(rx, ry);
      return ((k - 1) * k) / Math.hypot(u / rx, v / ry);
    },
  };
}

/** A superellipse |x/rx|^n + |y/ry|^n = 1: n = 2 is an ellipse, larger n is squarer. */
export function superellipse(
  cx: number,
  cy: number,
  rx: number,
  ry: number,
  n: number,
): ImplicitShape {
  return {
    bounds: [cx - rx - 2, cy - ry - 2, cx + rx + 2, cy + ry + 2],
    f: inPixels(
      (x, y) => Math.pow(Math.abs((x - cx) / rx) ** n + Math.abs((y - cy) / ry) ** n, 1 / n) - 1,
    ),
  };
}

/**
 * A face-like egg: an ellipse above `cy`, and below it a superellipse (exponent `jaw`) that
 * narrows to a chin `ryBottom` below the centre.
 */
export function egg(
  cx: number,
  cy: number,
  rx: number,
  ryTop: number,
  ryBottom: number,
  jaw: number,
): ImplicitShape {
  return {
    bounds: [cx - rx - 2, cy - ryTop - 2, cx + rx + 2, cy + ryBottom + 2],
    f: inPixels((x, y) => {
      const u = Math.abs(x - cx) / rx;
      if (y <= cy) return Math.hypot(u, (y - cy) / ryTop) - 1;
      const v = (y - cy) / ryBottom;
      return Math.pow(u ** jaw + v ** 2, 1 / jaw) - 1;
    }),
  };
}

export function roundedRect(
  x0: number,
  y0: number,
  x1: number,
  y1: number,
  radius: number,
): ImplicitShape {
  const cx = (x0 + x1) / 2;
  const cy = (y0 + y1) / 2;
  const hx = (x1 - x0) / 2 - radius;
  const hy = (y1 - y0) / 2 - radius;
  return {
    bounds: [x0 - 2, y0 - 2, x1 + 2, y1 + 2],
    f: (x, y) => {
      const qx = Math.abs(x - cx) - hx;
      const qy = Math.abs(y - cy) - hy;
      return Math.hypot(Math.max(qx, 0), Math.max(qy, 0)) + Math.min(Math.max(qx, qy), 0) - radius;
    },
  };
}

/** Points of a quadratic Bézier curve, for strokes. */
export function quadratic(p0: Point, c: Point, p1: Point, segments = 24): Point[] {
  const out: Point[] = [];
  for (let i = 0; i <= segments; i++) {
    const t = i / segments;
    const a = (1 - t) * (1 - t);
    const b = 2 * (1 - t) * t;
    const d = t * t;
    out.push([a * p0[0] + b * c[0] + d * p1[0], a * p0[1] + b * c[1] + d * p1[1]]);
  }
  return out;
}

/**
 * A stroke along a polyline whose half-width goes from `w0` at the start through `wMid` to `w1`
 * at the end (tapered brows, lash lines, smile creases).
 */
export function stroke(
  points: readonly Point[],
  w0: number,
  wMid: number,
  w1: number,
): ImplicitShape {
  const n = points.length;
  const maxW = Math.max(w0, wMid, w1);
  let x0 = Infinity;
  let y0 = Infinity;
  let x1 = -Infinity;
  let y1 = -Infinity;
  for (const [x, y] of points) {
    x0 = Math.min(x0, x);
    y0 = Math.min(y0, y);
    x1 = Math.max(x1, x);
    y1 = Math.max(y1, y);
  }
  const width = (t: number): number =>
    t < 0.5 ? w0 + (wMid - w0) * (t * 2) : wMid + (w1 - wMid) * ((t - 0.5) * 2);
  // Segment table: start, direction, squared length, widths at both ends.
  const segs = Math.max(0, n - 1);
  const ax = new Float64Array(segs);
  const ay = new Float64Array(segs);
  const dxs = new Float64Array(segs);
  const dys = new Float64Array(segs);
  const len2s = new Float64Array(segs);
  const wa = new Float64Array(segs);
  const wb = new Float64Array(segs);
  const boxes = new Float64Array(segs * 4);
  for (let i = 0; i < segs; i++) {
    const a = points[i] as Point;
    const b = points[i + 1] as Point;
    ax[i] = a[0];
    ay[i] = a[1];
    const dx = b[0] - a[0];
    const dy = b[1] - a[1];
    dxs[i] = dx;
    dys[i] = dy;
    len2s[i] = dx * dx + dy * dy || 1;
    wa[i] = width(i / segs);
    wb[i] = width((i + 1) / segs);
    const pad = Math.max(wa[i] as number, wb[i] as number);
    boxes[i * 4] = Math.min(a[0], b[0]) - pad;
    boxes[i * 4 + 1] = Math.min(a[1], b[1]) - pad;
    boxes[i * 4 + 2] = Math.max(a[0], b[0]) + pad;
    boxes[i * 4 + 3] = Math.max(a[1], b[1]) + pad;
  }
  return {
    bounds: [x0 - maxW - 2, y0 - maxW - 2, x1 + maxW + 2, y1 + maxW + 2],
    f: (x, y) => {
      let best = Infinity;
      for (let i = 0; i < segs; i++) {
        // Skip segments whose width-padded box is farther than the best distance so far (a
        // point inside the box gets no bound: the segment may still be closer).
        const gx = Math.max((boxes[i * 4] as number) - x, 0, x - (boxes[i * 4 + 2] as number));
        const gy = Math.max((boxes[i * 4 + 1] as number) - y, 0, y - (boxes[i * 4 + 3] as number));
        const bound = Math.max(gx, gy);
        if (bound > 0 && bound >= best) continue;
        const px = x - (ax[i] as number);
        const py = y - (ay[i] as number);
        const dx = dxs[i] as number;
        const dy = dys[i] as number;
        const s = Math.min(1, Math.max(0, (px * dx + py * dy) / (len2s[i] as number)));
        const w = (wa[i] as number) + ((wb[i] as number) - (wa[i] as number)) * s;
        const d = Math.hypot(px - s * dx, py - s * dy) - w;
        if (d < best) best = d;
      }
      return best;
    },
  };
}

/**
 * The region between two curves over [x0, x1]: above `bottom(x)` and below `top(x)` (screen y
 * grows downwards, so top(x) <= bottom(x) inside). Lips, mouth openings, eyelids. The curves are
 * tabulated once at quarter-pixel steps, so evaluating the shape costs a few array reads.
 */
export function band(
  x0: number,
  x1: number,
  top: (x: number) => number,
  bottom: (x: number) => number,
  yMin: number,
  yMax: number,
): ImplicitShape {
  const step = 0.25;
  const start = x0 - 4;
  const n = Math.ceil((x1 - x0 + 8) / step) + 1;
  const tops = new Float64Array(n);
  const bottoms = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    tops[i] = top(start + i * step);
    bottoms[i] = bottom(start + i * step);
  }
  return {
    bounds: [x0 - 2, yMin - 2, x1 + 2, yMax + 2],
    f: (x, y) => {
      const p = Math.min(n - 2, Math.max(0, (x - start) / step));
      const i = Math.floor(p);
      const t = p - i;
      const ta = tops[i] as number;
      const tb = tops[i + 1] as number;
      const ba = bottoms[i] as number;
      const bb = bottoms[i + 1] as number;
      const topSlope = (tb - ta) / step;
      const bottomSlope = (bb - ba) / step;
      // Vertical distance to each curve, scaled by the slope to approximate true distance.
      const dTop = (ta + (tb - ta) * t - y) / Math.sqrt(1 + topSlope * topSlope);
      const dBottom = (y - (ba + (bb - ba) * t)) / Math.sqrt(1 + bottomSlope * bottomSlope);
      return Math.max(dTop, dBottom, x0 - x, x - x1);
    },
  };
}

export function intersect(a: ImplicitShape, b: ImplicitShape): ImplicitShape {
  return {
    bounds: [
      Math.max(a.bounds[0], b.bounds[0]),
      Math.max(a.bounds[1], b.bounds[1]),
      Math.min(a.bounds[2], b.bounds[2]),
      Math.min(a.bounds[3], b.bounds[3]),
    ],
    f: (x, y) => Math.max(a.f(x, y), b.f(x, y)),
  };
}

export function union(...shapes: ImplicitShape[]): ImplicitShape {
  return {
    bounds: [
      Math.min(...shapes.map((s) => s.bounds[0])),
      Math.min(...shapes.map((s) => s.bounds[1])),
      Math.max(...shapes.map((s) => s.bounds[2])),
      Math.max(...shapes.map((s) => s.bounds[3])),
    ],
    f: (x, y) => {
      let best = Infinity;
      for (const s of shapes) best = Math.min(best, s.f(x, y));
      return best;
    },
  };
}

export function subtract(a: ImplicitShape, b: ImplicitShape): ImplicitShape {
  return { bounds: a.bounds, f: (x, y) => Math.max(a.f(x, y), -b.f(x, y)) };
}

/** Smooth union (polynomial smooth-min over `k` pixels): hair locks blending into a mass. */
export function smoothUnion(k: number, ...shapes: ImplicitShape[]): ImplicitShape {
  const hard = union(...shapes);
  return {
    bounds: hard.bounds,
    f: (x, y) => {
      let d = shapes[0]?.f(x, y) ?? Infinity;
      for (let i = 1; i < shapes.length; i++) {
        const e = (shapes[i] as ImplicitShape).f(x, y);
        const h = Math.min(1, Math.max(0, 0.5 + (0.5 * (e - d)) / k));
        d = e * (1 - h) + d * h - k * h * (1 - h);
      }
      return d;
    },
  };
}

/** A closed polygon (any winding), exact distance to its edges, sign from the even-odd rule. */
export function polygon(points: readonly Point[]): ImplicitShape {
  const n = points.length;
  return {
    bounds: [
      Math.min(...points.map((p) => p[0])) - 2,
      Math.min(...points.map((p) => p[1])) - 2,
      Math.max(...points.map((p) => p[0])) + 2,
      Math.max(...points.map((p) => p[1])) + 2,
    ],
    f: (x, y) => {
      let best = Infinity;
      let inside = false;
      for (let i = 0, j = n - 1; i < n; j = i++) {
        const a = points[i] as Point;
        const b = points[j] as Point;
        const dx = b[0] - a[0];
        const dy = b[1] - a[1];
        const len2 = dx * dx + dy * dy || 1;
        const s = Math.min(1, Math.max(0, ((x - a[0]) * dx + (y - a[1]) * dy) / len2));
        best = Math.min(best, Math.hypot(x - a[0] - s * dx, y - a[1] - s * dy));
        if (a[1] > y !== b[1] > y && x < ((b[0] - a[0]) * (y - a[1])) / (b[1] - a[1]) + a[0]) {
          inside = !inside;
        }
      }
      return inside ? -best : best;
    },
  };
}

/** The half-plane below the curve y = edge(x) (screen coordinates: larger y). */
export function below(
  edge: (x: number) => number,
  x0: number,
  x1: number,
  yMax: number,
): ImplicitShape {
  return {
    bounds: [x0, Math.min(edge(x0), edge((x0 + x1) / 2), edge(x1)) - 40, x1, yMax],
    f: inPixels((x, y) => edge(x) - y),
  };
}
