// SPDX-License-Identifier: GPL-3.0-or-later
import type { ImplicitShape } from './implicitShape.js';

/** sRGB colour, 0..255 per channel. */
export type Rgb = readonly [number, number, number];
/** A flat colour, or a colour per world position (gradients, shading). */
export type Paint = Rgb | ((x: number, y: number) => Rgb);

export interface FillOptions {
  /** 0..1, multiplies coverage. */
  readonly opacity?: number;
  /** Edge softness in pixels: 1 is a crisp anti-aliased edge, larger values blur it (blush, shadows). */
  readonly feather?: number;
  /** Only the part of the shape inside `clip` is painted. */
  readonly clip?: ImplicitShape;
  /** Only the part of the shape outside `mask` is painted. */
  readonly mask?: ImplicitShape;
}

/**
 * A premultiplied RGBA float image covering world pixels [x0, x0+width) x [y0, y0+height), drawn
 * with implicit shapes. This is the atlas-building canvas: slow and flexible, used once per avatar
 * at startup, never per frame.
 */
export class Raster {
  /** Premultiplied r, g, b (0..255) and alpha (0..1) per pixel. */
  readonly data: Float32Array;
  /** Pixel bounds [i0, j0, i1, j1) of everything drawn so far, so compositing skips empty space. */
  private drawn = [Infinity, Infinity, -Infinity, -Infinity];

  constructor(
    readonly x0: number,
    readonly y0: number,
    readonly width: number,
    readonly height: number,
  ) {
    this.data = new Float32Array(width * height * 4);
  }

  fill(shape: ImplicitShape, paint: Paint, options: FillOptions = {}): void {
    const opacity = options.opacity ?? 1;
    const feather = options.feather ?? 1;
    const { clip, mask } = options;
    const [bx0, by0, bx1, by1] = shape.bounds;
    const pad = Math.ceil(feather);
    const ix0 = Math.max(0, Math.floor(bx0 - pad - this.x0));
    const iy0 = Math.max(0, Math.floor(by0 - pad - this.y0));
    const ix1 = Math.min(this.width, Math.ceil(bx1 + pad - this.x0));
    const iy1 = Math.min(this.height, Math.ceil(by1 + pad - this.y0));
    const flat = typeof paint === 'function' ? undefined : paint;
    this.grow(ix0, iy0, ix1, iy1);
    for (let j = iy0; j < iy1; j++) {
      const y = this.y0 + j + 0.5;
      for (let i = ix0; i < ix1; i++) {
        const x = this.x0 + i + 0.5;
        let cover = coverage(shape.f(x, y), feather);
        if (cover <= 0) continue;
        if (clip) cover *= coverage(clip.f(x, y), 1);
        if (mask) cover *= 1 - coverage(mask.f(x, y), 1);
        cover *= opacity;
        if (cover <= 0) continue;
        const c = flat ?? (paint as (x: number, y: number) => Rgb)(x, y);
        const k = (j * this.width + i) * 4;
        const d = this.data;
        const keep = 1 - cover;
        d[k] = c[0] * cover + (d[k] as number) * keep;
        d[k + 1] = c[1] * cover + (d[k + 1] as number) * keep;
        d[k + 2] = c[2] * cover + (d[k + 2] as number) * keep;
        d[k + 3] = cover + (d[k + 3] as number) * keep;
      }
    }
  }

  /** Source-over this raster onto `dst`, shifted by an integer (dx, dy) in world pixels. */
  drawOnto(dst: Raster, dx = 0, dy = 0): void {
    const s = this.data;
    const d = dst.data;
    const offX = this.x0 + dx - dst.x0;
    const offY = this.y0 + dy - dst.y0;
    const [di0, dj0, di1, dj1] = this.drawn as [number, number, number, number];
    // Only where something was drawn here and the destination has pixels.
    const i0 = Math.max(di0, -offX);
    const j0 = Math.max(dj0, -offY);
    const i1 = Math.min(di1, dst.width - offX);
    const j1 = Math.min(dj1, dst.height - offY);
    if (i1 <= i0 || j1 <= j0) return;
    dst.grow(i0 + offX, j0 + offY, i1 + offX, j1 + offY);
    for (let j = j0; j < j1; j++) {
      const wy = j + offY;
      for (let i = i0; i < i1; i++) {
        const wx = i + offX;
        const k = (j * this.width + i) * 4;
        const a = s[k + 3] as number;
        if (a <= 0) continue;
        const m = (wy * dst.width + wx) * 4;
        const keep = 1 - a;
        d[m] = (s[k] as number) + (d[m] as number) * keep;
        d[m + 1] = (s[k + 1] as number) + (d[m + 1] as number) * keep;
        d[m + 2] = (s[k + 2] as number) + (d[m + 2] as number) * keep;
        d[m + 3] = a + (d[m + 3] as number) * keep;
      }
    }
  }

  clone(): Raster {
    const out = new Raster(this.x0, this.y0, this.width, this.height);
    out.data.set(this.data);
    out.drawn = [...this.drawn];
    return out;
  }

  /** A copy of the world rectangle (x, y, w, h) of this raster. */
  crop(x: number, y: number, w: number, h: number): Raster {
    const out = new Raster(x, y, w, h);
    this.drawOnto(out);
    return out;
  }

  private grow(i0: number, j0: number, i1: number, j1: number): void {
    const b = this.drawn;
    b[0] = Math.max(0, Math.min(b[0] as number, i0));
    b[1] = Math.max(0, Math.min(b[1] as number, j0));
    b[2] = Math.min(this.width, Math.max(b[2] as number, i1));
    b[3] = Math.min(this.height, Math.max(b[3] as number, j1));
  }

  alphaAt(x: number, y: number): number {
    const i = Math.floor(x - this.x0);
    const j = Math.floor(y - this.y0);
    if (i < 0 || j < 0 || i >= this.width || j >= this.height) return 0;
    return this.data[(j * this.width + i) * 4 + 3] as number;
  }
}

function coverage(distance: number, feather: number): number {
  const c = 0.5 - distance / feather;
  return c <= 0 ? 0 : c >= 1 ? 1 : c;
}

/** Linear blend of two colours, t in 0..1. */
export function mix(a: Rgb, b: Rgb, t: number): Rgb {
  return [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t, a[2] + (b[2] - a[2]) * t];
}

/** A colour scaled towards black (f < 1) or white (f > 1). */
export function shade(c: Rgb, f: number): Rgb {
  return f <= 1 ? mix([0, 0, 0], c, f) : mix(c, [255, 255, 255], f - 1);
}
