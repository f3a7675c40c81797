// SPDX-License-Identifier: GPL-3.0-or-later
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { createFaceRenderer, shareAvatarAtlas } from '../../../src/media/render/index.js';

const AVATAR = 'avt_Noor00000000000000000001';

describe('shared atlas', () => {
  it('lets a worker thread render from the atlas this thread built, identically', async () => {
    const shared = shareAvatarAtlas(AVATAR);
    expect(shared.buffer).toBeInstanceOf(SharedArrayBuffer);
    const expected = createFaceRenderer(AVATAR, { seed: 4 })
      .renderFrame({ timeMs: 1234, mouth: { viseme: 'O', openness: 0.8 }, parked: false })
      .slice();
    // The worker runs TypeScript through tsx's loader, registered before importing the script.
    const script = new URL('./sharedAtlasWorker.ts', import.meta.url).href;
    const worker = new Worker(
      `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(script)}); });`,
      { eval: true, workerData: { atlas: shared, seed: 4 } },
    );
    const reply = await new Promise<{ frame: Uint8Array; adoptMs: number }>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    await worker.terminate();
    console.log(
      `worker adopted a ${(shared.buffer.byteLength / 1e6).toFixed(1)} MB shared atlas and rendered in ${reply.adoptMs.toFixed(1)} ms`,
    );
    expect(reply.frame.length).toBe(expected.length);
    expect(Buffer.from(reply.frame).equals(Buffer.from(expected))).toBe(true);
  });
});
