// SPDX-License-Identifier: GPL-3.0-or-later
import { parentPort } from 'node:worker_threads';
import { packAtlas } from '../render/index.js';
import { buildPhotoAtlas } from './buildPhotoAtlas.js';
import { detectFaces, largestFaceLandmarks } from './findFace.js';
import type { PhotoTask, PhotoTaskResult, PhotoThreadReply } from './photoThreadProtocol.js';

/**
 * The photo thread: face detection (TensorFlow.js WASM, about a second) and the atlas
 * build (about a second of JavaScript), off the server's event loop. Decoding stays with sharp
 * on the main thread (libuv's pool): sharp is not safe to unload with a terminated worker.
 */
async function run(task: PhotoTask): Promise<PhotoTaskResult> {
  switch (task.kind) {
    case 'detect':
      return detectFaces(task.rgb, task.width, task.height);
    case 'build': {
      const build = await buildPhotoAtlas(
        task.canvas,
        task.landmarks,
        task.atlasId,
        task.photoScale,
        { findLandmarks: largestFaceLandmarks },
      );
      return {
        atlas: packAtlas(build.atlas),
        neutral: build.neutral,
        aimFrame: build.aimFrame,
        timings: build.timings,
      };
    }
  }
}

parentPort!.on('message', ({ id, task }: { id: number; task: PhotoTask }) => {
  run(task).then(
    (result) => parentPort!.postMessage({ id, result } satisfies PhotoThreadReply),
    (error: unknown) =>
      parentPort!.postMessage({
        id,
        error: { message: error instanceof Error ? error.message : String(error) },
      } satisfies PhotoThreadReply),
  );
});
