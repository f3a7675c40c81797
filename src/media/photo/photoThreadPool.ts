// SPDX-License-Identifier: GPL-3.0-or-later
import { startWorkerThread, childScript } from '../../threads/childScript.js';
import { ThreadPool } from '../../threads/threadPool.js';
import type { FoundFace } from './findFace.js';
import type { Point } from './landmarks.js';
import type { PhotoBuildResult, PhotoTask, PhotoTaskResult } from './photoThreadProtocol.js';

export interface PhotoThreadPoolOptions {
  /** A task running longer than this ends the thread and fails (default 60 s). */
  taskTimeoutMs?: number;
  /** JavaScript heap of the thread, MiB (default 512; the models' WASM memory is apart). */
  maxHeapMb?: number;
  /** The thread (and its loaded models, ~100 MB) ends after this long without work (default 5 min). */
  idleMs?: number;
}

/**
 * One worker thread for face detection and atlas builds, started on first use and kept while
 * there is work (the models load once per thread, under a second). Tasks run one at a time in
 * arrival order: photo avatars are made rarely, and each uses a core for a second or two. A task
 * that overruns its time ends the thread (a fresh one takes the next task). (A ThreadPool of one:
 * restart, queue and shutdown.)
 */
export class PhotoThreadPool {
  private readonly pool: ThreadPool<PhotoTask, PhotoTaskResult, { message: string }>;

  constructor(options: PhotoThreadPoolOptions = {}) {
    const maxHeapMb = options.maxHeapMb ?? 512;
    this.pool = new ThreadPool({
      size: 1,
      taskTimeoutMs: options.taskTimeoutMs ?? 60_000,
      idleMs: options.idleMs ?? 300_000,
      startThread: () =>
        startWorkerThread(childScript(import.meta.url, './photoThread.ts', 'photoThread'), {
          maxOldGenerationSizeMb: maxHeapMb,
        }),
      errors: {
        fromThread: (error) => new Error(error.message),
        timeout: (limitMs) =>
          new Error(`the photo took longer than ${limitMs / 1000} s to process`),
        crashed: (error) =>
          error.code === 'ERR_WORKER_OUT_OF_MEMORY'
            ? new Error('the photo needs more memory to process than is allowed')
            : new Error(`the photo could not be processed: ${error.message}`),
        exited: () => new Error('the photo thread ended'),
        closed: () => new Error('photo thread closed'),
        busy: () => new Error('photo thread busy'),
      },
    });
  }

  /** Every face in an RGB picture, largest first. */
  detect(rgb: Uint8Array, width: number, height: number): Promise<FoundFace[]> {
    return this.pool.run({ kind: 'detect', rgb, width, height }) as Promise<FoundFace[]>;
  }

  /** The atlas of a framed canvas (see buildPhotoAtlas). */
  build(
    canvas: Uint8Array,
    landmarks: Point[],
    atlasId: string,
    photoScale: number,
  ): Promise<PhotoBuildResult> {
    return this.pool.run({
      kind: 'build',
      canvas,
      landmarks,
      atlasId,
      photoScale,
    }) as Promise<PhotoBuildResult>;
  }

  /** Ends the thread; queued and running tasks fail. A later task starts a new thread. */
  close(): Promise<void> {
    return this.pool.close();
  }
}

let shared: PhotoThreadPool | undefined;

/** The process's photo thread pool (its idle thread does not keep the process alive). */
export function photoThreadPool(): PhotoThreadPool {
  shared ??= new PhotoThreadPool();
  return shared;
}
