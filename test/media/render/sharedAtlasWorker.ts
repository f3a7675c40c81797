// SPDX-License-Identifier: GPL-3.0-or-later
// Worker side of sharedAtlas.test.ts: adopt the posted atlas, render, send the frame back.
import { parentPort, workerData } from 'node:worker_threads';
import {
  adoptSharedAtlas,
  createFaceRenderer,
  type SharedAvatarAtlas,
} from '../../../src/media/render/index.js';

const { atlas, seed } = workerData as { atlas: SharedAvatarAtlas; seed: number };
const started = performance.now();
adoptSharedAtlas(atlas);
const r = createFaceRenderer(atlas.avatarId, { seed });
const frame = r.renderFrame({ timeMs: 1234, mouth: { viseme: 'O', openness: 0.8 }, parked: false });
parentPort?.postMessage({ frame: frame.slice(), adoptMs: performance.now() - started });
