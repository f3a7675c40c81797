// SPDX-License-Identifier: GPL-3.0-or-later
import type { Worker } from 'node:worker_threads';
import { startWorkerThread, childScript } from '../childScript.js';
import type { FoundFace } from './findFace.js';
import type { Point } from './landmarks.js';
import type {
  PhotoBuildResult,
  PhotoTask,
  PhotoTaskResult,
  PhotoThreadReply,
} from './photoThreadProtocol.js';

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
 * that overruns its time ends the thread (a fresh one takes the next task).
 */
export class PhotoThreadPool {
  private worker: Worker | undefined;
  private readonly queue: Job[] = [];
  private running: (Job & { id: number; timer: NodeJS.Timeout }) | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private nextId = 1;
  private readonly taskTimeoutMs: number;
  private readonly maxHeapMb: number;
  private readonly idleMs: number;

  constructor(options: PhotoThreadPoolOptions = {}) {
    this.taskTimeoutMs = options.taskTimeoutMs ?? 60_000;
    this.maxHeapMb = options.maxHeapMb ?? 512;
    this.idleMs = options.idleMs ?? 300_000;
  }

  /** Every face in an RGB picture, largest first. */
  detect(rgb: Uint8Array, width: number, height: number): Promise<FoundFace[]> {
    return this.submit({ kind: 'detect', rgb, width, height }) as Promise<FoundFace[]>;
  }

  /** The atlas of a framed canvas (see buildPhotoAtlas). */
  build(
    canvas: Uint8Array,
    landmarks: Point[],
    atlasId: string,
    photoScale: number,
  ): Promise<PhotoBuildResult> {
    return this.submit({
      kind: 'build',
      canvas,
      landmarks,
      atlasId,
      photoScale,
    }) as Promise<PhotoBuildResult>;
  }

  /** Ends the thread; queued and running tasks fail. A later task starts a new thread. */
  async close(): Promise<void> {
    clearTimeout(this.idleTimer);
    for (const job of this.queue.splice(0)) job.reject(new Error('photo thread closed'));
    const running = this.running;
    this.running = undefined;
    if (running) {
      clearTimeout(running.timer);
      running.reject(new Error('photo thread closed'));
    }
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }

  private submit(task: PhotoTask): Promise<PhotoTaskResult> {
    return new Promise((resolve, reject) => {
      this.queue.push({ task, resolve, reject });
      this.dispatch();
    });
  }

  private dispatch(): void {
    if (this.running || this.queue.length === 0) {
      if (!this.running && this.worker) this.scheduleIdleEnd();
      return;
    }
    clearTimeout(this.idleTimer);
    const worker = (this.worker ??= this.spawn());
    const job = this.queue.shift()!;
    const id = this.nextId++;
    const timer = setTimeout(
      () =>
        this.fail(
          new Error(`the photo took longer than ${this.taskTimeoutMs / 1000} s to process`),
        ),
      this.taskTimeoutMs,
    );
    this.running = { ...job, id, timer };
    worker.ref();
    worker.postMessage({ id, task: job.task });
  }

  private scheduleIdleEnd(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      const worker = this.worker;
      if (!worker || this.running) return;
      this.worker = undefined;
      void worker.terminate();
    }, this.idleMs);
    this.idleTimer.unref();
  }

  private spawn(): Worker {
    const worker = startWorkerThread(
      childScript(import.meta.url, './photoThread.ts', 'photoThread'),
      { maxOldGenerationSizeMb: this.maxHeapMb },
    );
    worker.on('message', (reply: PhotoThreadReply) => {
      const job = this.running;
      if (!job || job.id !== reply.id || this.worker !== worker) return;
      clearTimeout(job.timer);
      this.running = undefined;
      worker.unref();
      if ('error' in reply) job.reject(new Error(reply.error.message));
      else job.resolve(reply.result);
      this.dispatch();
    });
    worker.on('error', (error: Error & { code?: string }) => {
      if (this.worker !== worker) return;
      this.fail(
        error.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? new Error('the photo needs more memory to process than is allowed')
          : new Error(`the photo could not be processed: ${error.message}`),
      );
    });
    worker.on('exit', () => {
      if (this.worker === worker) this.fail(new Error('the photo thread ended'));
    });
    worker.unref();
    return worker;
  }

  /** Ends the thread and fails its task; queued tasks go to a new thread. */
  private fail(error: Error): void {
    const worker = this.worker;
    this.worker = undefined;
    const job = this.running;
    this.running = undefined;
    if (job) {
      clearTimeout(job.timer);
      job.reject(error);
    }
    void worker?.terminate();
    this.dispatch();
  }
}

interface Job {
  task: PhotoTask;
  resolve(result: PhotoTaskResult): void;
  reject(error: Error): void;
}

let shared: PhotoThreadPool | undefined;

/** The process's photo thread pool (its idle thread does not keep the process alive). */
export function photoThreadPool(): PhotoThreadPool {
  shared ??= new PhotoThreadPool();
  return shared;
}
