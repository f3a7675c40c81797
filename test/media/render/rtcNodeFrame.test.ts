// SPDX-License-Identifier: GPL-3.0-or-later
import { VideoBufferType, VideoFrame, VideoSource } from '@livekit/rtc-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFaceRenderer } from '../../../src/media/render/index.js';
import { loadCatalogueAtlases } from '../../support/catalogueAtlases.js';

/**
 * The renderer's buffer goes straight into rtc-node: check that libwebrtc reads our plane layout
 * as intended (native conversion back to RGBA gives the colours we drew) and time the capture.
 */
describe('face frames in @livekit/rtc-node', () => {
  const source = new VideoSource(512, 512);
  // The atlases as drawn once for the run (catalogueAtlases.ts).
  beforeAll(
    () => loadCatalogueAtlases(['avt_Milo00000000000000000001', 'avt_Noor00000000000000000001']),
    120_000,
  );
  afterAll(async () => {
    await source.close();
  });

  it('converts natively to the colours we drew', () => {
    const r = createFaceRenderer('avt_Milo00000000000000000001', { seed: 1 });
    const i420 = r.renderFrame({ timeMs: 0, mouth: { viseme: 'AA', openness: 1 }, parked: false });
    const rgba = new VideoFrame(i420, 512, 512, VideoBufferType.I420).convert(VideoBufferType.RGBA);
    const px = (x: number, y: number): number[] =>
      Array.from(rgba.data.subarray((y * 512 + x) * 4, (y * 512 + x) * 4 + 3));
    const [br, bg, bb] = px(20, 20);
    // Milo's background is a light blue-grey, his skin warm, the open mouth dark.
    expect(bb!).toBeGreaterThan(br!);
    expect(bg!).toBeGreaterThan(180);
    const [sr, , sb] = px(200, 270);
    expect(sr!).toBeGreaterThan(sb! + 40);
    const mouth = px(256, 318);
    expect(Math.max(...mouth)).toBeLessThan(110);
  });

  it('captures rendered frames (timed)', () => {
    const r = createFaceRenderer('avt_Noor00000000000000000001', { seed: 1 });
    const n = 300;
    let renderMs = 0;
    const started = performance.now();
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      const frame = r.renderFrame({
        timeMs: i * 40,
        mouth: { viseme: 'E', openness: (i % 5) / 4 },
        parked: false,
      });
      renderMs += performance.now() - t0;
      source.captureFrame(
        new VideoFrame(frame, 512, 512, VideoBufferType.I420),
        BigInt(i * 40_000),
      );
    }
    const totalMs = (performance.now() - started) / n;
    console.log(
      `render ${(renderMs / n).toFixed(3)} ms + captureFrame = ${totalMs.toFixed(3)} ms per frame`,
    );
    expect(totalMs).toBeGreaterThan(0);
  });
});
