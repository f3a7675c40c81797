// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * Resampling a picture through a backward map (each output pixel says where in the source it
 * comes from), and thin-plate splines: the smooth maps that carry chosen source points exactly
 * to chosen target points and bend everything between as little as possible.
 */

/** A float RGB picture (0..255 per channel), 3 values per pixel. */
export interface FloatPicture {
  readonly width: number;
  readonly height: number;
  readonly data: Float32Array;
}

export function floatPicture(width: number, height: number, rgb?: Uint8Array): FloatPicture {
  const data = new Float32Array(width * height * 3);
  if (rgb) data.set(rgb);
  return { width, height, data };
}

/**
 * Bilinear sample of `src` at the continuous position (x, y) (pixel centres at +0.5), edges
 * repeated, into out[o..o+2].
 */
export function sampleInto(
  src: FloatPicture,
  x: number,
  y: number,
  out: Float32Array,
  o: number,
): void {
  const { width: w, height: h, data } = src;
  const fx = Math.min(w - 1, Math.max(0, x - 0.5));
  const fy = Math.min(h - 1, Math.max(0, y - 0.5));
  const x0 = Math.floor(fx);
  const y0 = Math.floor(fy);
  const x1 = Math.min(w - 1, x0 + 1);
  const y1 = Math.min(h - 1, y0 + 1);
  const ax = fx - x0;
  const ay = fy - y0;
  const a = (y0 * w + x0) * 3;
  const b = (y0 * w + x1) * 3;
  const c = (y1 * w + x0) * 3;
  const d = (y1 * w + x1) * 3;
  for (let k = 0; k < 3; k++) {
    const top = (data[a + k] as number) + ((data[b + k] as number) - (data[a + k] as number)) * ax;
    const bottom =
      (data[c + k] as number) + ((data[d + k] as number) - (data[c + k] as number)) * ax;
    out[o + k] = top + (bottom - top) * ay;
  }
}

/** A 2-D point. */
export interface Vec {
  x: number;
  y: number;
}

/**
 * A thin-plate spline f with f(targets[i]) = sources[i] (a backward map: for a pixel of the
 * deformed picture, where it comes from). `smoothing` relaxes exactness (in squared units of
 * `scale`), which keeps nearly coincident targets from tearing the map.
 */
export class ThinPlateSpline {
  private readonly n: number;
  private readonly cx: Float64Array;
  private readonly cy: Float64Array;
  private readonly wx: Float64Array;
  private readonly wy: Float64Array;

  constructor(
    targets: readonly Vec[],
    sources: readonly Vec[],
    private readonly scale: number,
    smoothing = 1e-3,
  ) {
    const n = targets.length;
    if (n !== sources.length || n < 3) throw new RangeError('a spline needs 3+ point pairs');
    this.n = n;
    this.cx = Float64Array.from(targets, (p) => p.x / scale);
    this.cy = Float64Array.from(targets, (p) => p.y / scale);
    const m = n + 3;
    const a = new Float64Array(m * m);
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        a[i * m + j] =
          i === j
            ? smoothing
            : kernel(
                (this.cx[i] as number) - (this.cx[j] as number),
                (this.cy[i] as number) - (this.cy[j] as number),
              );
      }
      a[i * m + n] = 1;
      a[i * m + n + 1] = this.cx[i] as number;
      a[i * m + n + 2] = this.cy[i] as number;
      a[n * m + i] = 1;
      a[(n + 1) * m + i] = this.cx[i] as number;
      a[(n + 2) * m + i] = this.cy[i] as number;
    }
    // Solve for displacements (source - target), in units of `scale`.
    const bx = new Float64Array(m);
    const by = new Float64Array(m);
    for (let i = 0; i < n; i++) {
      bx[i] = ((sources[i] as Vec).x - (targets[i] as Vec).x) / scale;
      by[i] = ((sources[i] as Vec).y - (targets[i] as Vec).y) / scale;
    }
    [this.wx, this.wy] = solveTwo(a, m, bx, by);
  }

  /**
   * The source position of target position (x, y). `known` holds the kernel's values at (x, y)
   * of the spline's first targets, from `at` (splineKernels: the same for every spline whose
   * first targets these are, and the same numbers as computed here).
   */
  map(x: number, y: number, out: Vec, known?: SplineKernels, at = 0): Vec {
    const n = this.n;
    const px = x / this.scale;
    const py = y / this.scale;
    const wx = this.wx;
    const wy = this.wy;
    let dx = (wx[n] as number) + (wx[n + 1] as number) * px + (wx[n + 2] as number) * py;
    let dy = (wy[n] as number) + (wy[n + 1] as number) * px + (wy[n + 2] as number) * py;
    const first = known ? Math.min(n, known.count) : 0;
    for (let i = 0; i < first; i++) {
      const u = (known as SplineKernels).values[at * first + i] as number;
      dx += (wx[i] as number) * u;
      dy += (wy[i] as number) * u;
    }
    for (let i = first; i < n; i++) {
      const u = kernel(px - (this.cx[i] as number), py - (this.cy[i] as number));
      dx += (wx[i] as number) * u;
      dy += (wy[i] as number) * u;
    }
    out.x = x + dx * this.scale;
    out.y = y + dy * this.scale;
    return out;
  }
}

/** The spline kernel's values at points for targets every spline of a set begins with. */
export interface SplineKernels {
  /** How many of the targets (the first of each spline). */
  count: number;
  /** Per point, `count` values. */
  values: Float64Array;
}

/**
 * The kernel's values of `targets` (the first targets of splines of this `scale`) at each of
 * `points`, computed as ThinPlateSpline.map would: a map at the k-th point given them at k gives
 * the same numbers without their logarithms (the mouth sprites' border, once a build instead of
 * once a sprite).
 */
export function splineKernels(
  targets: readonly Vec[],
  points: readonly Vec[],
  scale: number,
): SplineKernels {
  const count = targets.length;
  const cx = Float64Array.from(targets, (p) => p.x / scale);
  const cy = Float64Array.from(targets, (p) => p.y / scale);
  const values = new Float64Array(points.length * count);
  for (let k = 0; k < points.length; k++) {
    const px = (points[k] as Vec).x / scale;
    const py = (points[k] as Vec).y / scale;
    for (let i = 0; i < count; i++) {
      values[k * count + i] = kernel(px - (cx[i] as number), py - (cy[i] as number));
    }
  }
  return { count, values };
}

function kernel(dx: number, dy: number): number {
  const r2 = dx * dx + dy * dy;
  return r2 < 1e-12 ? 0 : r2 * Math.log(r2);
}

/** Gaussian elimination with partial pivoting, two right-hand sides at once. */
function solveTwo(
  a: Float64Array,
  m: number,
  b1: Float64Array,
  b2: Float64Array,
): [Float64Array, Float64Array] {
  for (let col = 0; col < m; col++) {
    let pivot = col;
    for (let r = col + 1; r < m; r++) {
      if (Math.abs(a[r * m + col] as number) > Math.abs(a[pivot * m + col] as number)) pivot = r;
    }
    if (Math.abs(a[pivot * m + col] as number) < 1e-12) throw new Error('singular spline system');
    if (pivot !== col) {
      for (let k = 0; k < m; k++) {
        const t = a[col * m + k] as number;
        a[col * m + k] = a[pivot * m + k] as number;
        a[pivot * m + k] = t;
      }
      [b1[col], b1[pivot]] = [b1[pivot] as number, b1[col] as number];
      [b2[col], b2[pivot]] = [b2[pivot] as number, b2[col] as number];
    }
    const p = a[col * m + col] as number;
    for (let r = col + 1; r < m; r++) {
      const f = (a[r * m + col] as number) / p;
      if (f === 0) continue;
      for (let k = col; k < m; k++)
        a[r * m + k] = (a[r * m + k] as number) - f * (a[col * m + k] as number);
      b1[r] = (b1[r] as number) - f * (b1[col] as number);
      b2[r] = (b2[r] as number) - f * (b2[col] as number);
    }
  }
  const x1 = new Float64Array(m);
  const x2 = new Float64Array(m);
  for (let r = m - 1; r >= 0; r--) {
    let s1 = b1[r] as number;
    let s2 = b2[r] as number;
    for (let k = r + 1; k < m; k++) {
      s1 -= (a[r * m + k] as number) * (x1[k] as number);
      s2 -= (a[r * m + k] as number) * (x2[k] as number);
    }
    x1[r] = s1 / (a[r * m + r] as number);
    x2[r] = s2 / (a[r * m + r] as number);
  }
  return [x1, x2];
}

export function smoothstep(edge0: number, edge1: number, x: number): number {
  const t = Math.min(1, Math.max(0, (x - edge0) / (edge1 - edge0)));
  return t * t * (3 - 2 * t);
}

export function clamp(x: number, lo: number, hi: number): number {
  return x < lo ? lo : x > hi ? hi : x;
}

export function lerp(a: number, b: number, t: number): number {
  return a + (b - a) * t;
}
