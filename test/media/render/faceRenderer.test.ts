// SPDX-License-Identifier: GPL-3.0-or-later
import { beforeAll, describe, expect, it } from 'vitest';
import { AVATAR_CATALOGUE } from '../../../src/media/avatarCatalogue.js';
import type { MouthPose, Viseme } from '../../../src/media/lipsync/viseme.js';
import {
  createAtlasFaceRenderer,
  createFaceRenderer,
  EYE_REGION,
  i420Size,
  MOUTH_REGION,
  measureMouthOpening,
  prepareAvatar,
  type FaceRenderer,
  type Rect,
} from '../../../src/media/render/index.js';
import { loadCatalogueAtlases } from '../../support/catalogueAtlases.js';

// The catalogue's atlases as drawn once for the run (the last suite here draws two itself).
beforeAll(() => loadCatalogueAtlases(), 120_000);

const REST: MouthPose = { viseme: 'rest', openness: 0 };
const FRAME_MS = 40;

/** Luma pixels in `rect` brighter than any skin: the whites of the eyes. */
function scleraPixels(frame: Uint8Array, rect: Rect): number {
  let n = 0;
  for (let y = rect.y; y < rect.y + rect.height; y++) {
    for (let x = rect.x; x < rect.x + rect.width; x++)
      if ((frame[y * 512 + x] as number) > 212) n++;
  }
  return n;
}

function meanAbsDiff(a: Uint8Array, b: Uint8Array, rect?: Rect): number {
  const r = rect ?? { x: 0, y: 0, width: 512, height: 512 };
  let sum = 0;
  for (let y = r.y; y < r.y + r.height; y++) {
    for (let x = r.x; x < r.x + r.width; x++) {
      sum += Math.abs((a[y * 512 + x] as number) - (b[y * 512 + x] as number));
    }
  }
  return sum / (r.width * r.height);
}

/** A mouth held still for a moment (openness changes are immediate; this is just frames). */
function frameWithMouth(
  avatarId: string,
  viseme: Viseme,
  openness: number,
): { r: FaceRenderer; frame: Uint8Array } {
  const r = createFaceRenderer(avatarId, { seed: 11 });
  return {
    r,
    frame: r.renderFrame({ timeMs: 0, mouth: { viseme, openness }, parked: false }).slice(),
  };
}

describe.each(AVATAR_CATALOGUE.map((a) => [a.name, a.avatarId] as const))(
  'face renderer: %s',
  (name, avatarId) => {
    it('builds its atlas once and renders 512x512 I420 into one reused buffer', () => {
      const prep = prepareAvatar(avatarId);
      const r = createFaceRenderer(avatarId, { seed: 1 });
      expect(r.width).toBe(512);
      expect(r.height).toBe(512);
      const a = r.renderFrame({ timeMs: 0, mouth: REST, parked: false });
      const b = r.renderFrame({ timeMs: 40, mouth: REST, parked: false });
      expect(a.length).toBe(i420Size(512, 512));
      expect(a.length).toBe(512 * 512 * 1.5);
      expect(b).toBe(a);
      // rtc-node's VideoFrame hands `data.buffer` to native code: the frame must own its buffer.
      expect(a.byteOffset).toBe(0);
      expect(a.buffer.byteLength).toBe(a.length);
      console.log(
        `${name}: atlas built in ${prep.buildMs.toFixed(0)} ms, ${(prep.bytes / 1e6).toFixed(1)} MB`,
      );
    });

    it('never repeats a frame while idle, active or parked', () => {
      for (const parked of [false, true]) {
        const r = createFaceRenderer(avatarId, { seed: 5 });
        let prev = r.renderFrame({ timeMs: 0, mouth: REST, parked }).slice();
        const step = parked ? 200 : FRAME_MS;
        for (let t = step; t <= 20_000; t += step) {
          const frame = r.renderFrame({ timeMs: t, mouth: REST, parked });
          let differs = false;
          for (let i = 0; i < frame.length && !differs; i++) differs = frame[i] !== prev[i];
          expect(differs, `frame at ${t} ms equals the previous one (parked: ${parked})`).toBe(
            true,
          );
          prev = frame.slice();
        }
      }
    });

    it('blinks within a few seconds of idle', () => {
      for (const seed of [1, 2, 3, 4]) {
        const r = createFaceRenderer(avatarId, { seed });
        const open = scleraPixels(
          r.renderFrame({ timeMs: 0, mouth: REST, parked: false }),
          r.eyeRegion,
        );
        expect(open).toBeGreaterThan(300);
        let closedAt = -1;
        for (let t = FRAME_MS; t <= 6000 && closedAt < 0; t += FRAME_MS) {
          const frame = r.renderFrame({ timeMs: t, mouth: REST, parked: false });
          if (scleraPixels(frame, r.eyeRegion) < open * 0.15) closedAt = t;
        }
        expect(closedAt, `seed ${seed}: no blink in 6 s`).toBeGreaterThan(0);
      }
    });

    it('opens the mouth measurably with openness, and keeps it shut for m/b/p', () => {
      const measure = (v: Viseme, o: number): number => {
        const { r, frame } = frameWithMouth(avatarId, v, o);
        return measureMouthOpening(frame, r.width, r.height, r.mouthRegion);
      };
      const rest = measure('rest', 0);
      expect(rest).toBeLessThan(0.04);
      expect(measure('AA', 0.5)).toBeGreaterThan(rest + 0.02);
      expect(measure('AA', 1)).toBeGreaterThan(measure('AA', 0.5) + 0.02);
      expect(measure('AA', 1)).toBeGreaterThan(0.08);
      for (const v of ['E', 'O', 'KG'] as const)
        expect(measure(v, 1), v).toBeGreaterThan(rest + 0.03);
      expect(measure('MBP', 1)).toBeLessThan(0.04);
      // Every viseme has its own look at full openness.
      const frames = (['AA', 'E', 'I', 'O', 'U', 'FV', 'TH', 'SZ'] as const).map((v) =>
        frameWithMouth(avatarId, v, 1),
      );
      for (let i = 0; i < frames.length; i++) {
        for (let j = i + 1; j < frames.length; j++) {
          const a = frames[i]!;
          const b = frames[j]!;
          expect(meanAbsDiff(a.frame, b.frame, a.r.mouthRegion)).toBeGreaterThan(1);
        }
      }
    });

    it('looks different when parked: lids down, eyes lowered', () => {
      const active = createFaceRenderer(avatarId, { seed: 9 });
      const parked = createFaceRenderer(avatarId, { seed: 9 });
      let a = new Uint8Array(0);
      let p = new Uint8Array(0);
      // Past the lid transition, and at a moment with no blink in either.
      for (let t = 0; t <= 1200; t += FRAME_MS) {
        a = active.renderFrame({ timeMs: t, mouth: REST, parked: false }).slice();
        p = parked.renderFrame({ timeMs: t, mouth: REST, parked: true }).slice();
      }
      const activeSclera = scleraPixels(a, active.eyeRegion);
      const parkedSclera = scleraPixels(p, parked.eyeRegion);
      expect(parkedSclera).toBeLessThan(activeSclera * 0.7);
      expect(meanAbsDiff(a, p, active.eyeRegion)).toBeGreaterThan(2);
    });

    it('renders well under a millisecond per frame', () => {
      const r = createFaceRenderer(avatarId, { seed: 2 });
      const visemes: Viseme[] = ['AA', 'E', 'O', 'MBP', 'rest', 'SZ'];
      for (let i = 0; i < 200; i++) r.renderFrame({ timeMs: i * 40, mouth: REST, parked: false });
      const n = 500;
      const started = performance.now();
      for (let i = 0; i < n; i++) {
        r.renderFrame({
          timeMs: 8000 + i * 40,
          mouth: { viseme: visemes[i % visemes.length] as Viseme, openness: (i % 7) / 6 },
          parked: false,
        });
      }
      const ms = (performance.now() - started) / n;
      console.log(`${name}: ${ms.toFixed(3)} ms per frame (mean of ${n})`);
      expect(ms).toBeGreaterThan(0);
    });
  },
);

describe('face renderer: catalogue', () => {
  it('gives every avatar its own look', () => {
    const frames = AVATAR_CATALOGUE.map((a) =>
      createFaceRenderer(a.avatarId, { seed: 1 })
        .renderFrame({ timeMs: 0, mouth: REST, parked: false })
        .slice(),
    );
    for (let i = 0; i < frames.length; i++) {
      for (let j = i + 1; j < frames.length; j++) {
        expect(meanAbsDiff(frames[i]!, frames[j]!)).toBeGreaterThan(10);
      }
    }
  });

  it('exports the mouth and eye regions without building an atlas', () => {
    const r = createFaceRenderer(AVATAR_CATALOGUE[0]!.avatarId);
    expect(MOUTH_REGION).toEqual(r.mouthRegion);
    expect(EYE_REGION).toEqual(r.eyeRegion);
  });

  it('refuses an avatar id outside the catalogue', () => {
    expect(() => createFaceRenderer('avt_Nobody000000000000000001')).toThrow(/avatar/);
  });
});

describe('face renderer: building without blocking', () => {
  it('builds in short steps that leave the event loop free, and a sync call finishes it', async () => {
    // A fresh instance of the atlas module, its caches empty (the atlases the other suites use
    // are installed in this file's), without resetting the module graph: a run without isolation
    // (test:fast) shares it with the files after this one.
    const source = new URL('../../../src/media/render/spriteAtlas.ts', import.meta.url).pathname;
    const atlases = (await import(
      /* @vite-ignore */ `${source}?fresh`
    )) as typeof import('../../../src/media/render/spriteAtlas.js');
    let longestGapMs = 0;
    let turns = 0;
    let last = performance.now();
    let ticking = true;
    const tick = (): void => {
      const now = performance.now();
      longestGapMs = Math.max(longestGapMs, now - last);
      last = now;
      turns++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const built = await atlases.avatarAtlasAsync(AVATAR_CATALOGUE[1]!.avatarId);
    ticking = false;
    console.log(
      `async build: ${built.buildMs.toFixed(0)} ms of work in ${turns} event-loop turns, longest stall ${longestGapMs.toFixed(1)} ms`,
    );
    expect(built.bytes).toBeGreaterThan(1e6);
    // Other work ran between the build's steps (timings are not asserted: the machine is shared).
    expect(turns).toBeGreaterThan(100);

    // Started async, then needed at once: the sync path finishes the same build.
    const pending = atlases.avatarAtlasAsync(AVATAR_CATALOGUE[2]!.avatarId);
    const atlas = atlases.avatarAtlas(AVATAR_CATALOGUE[2]!.avatarId);
    const r = createAtlasFaceRenderer(atlas, { seed: 1 });
    expect(r.renderFrame({ timeMs: 0, mouth: REST, parked: false }).length).toBe(512 * 768);
    expect(await pending).toBe(atlas);
    expect(atlas.bytes).toBeGreaterThan(1e6);
  }, 120_000); // two whole atlas builds: seconds each, more on a busy machine
});
