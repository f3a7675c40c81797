// SPDX-License-Identifier: GPL-3.0-or-later
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import {
  AudioTooLongError,
  UnreadableAudioError,
  UnsupportedAudioError,
  type AudioDecodeError,
  type DecodedAudio,
  type DecodeAudioOptions,
} from '../audio/index.js';
import type { SpeechDetection } from '../speech/index.js';
import { startWorkerThread, childScript } from '../childScript.js';
import type { AudioTask, AudioTaskResult, AudioThreadReply } from './audioThreadProtocol.js';

export interface AudioThreadPoolOptions {
  /** Threads (default: 2, or 1 on a single core). */
  size?: number;
  /** A task running longer than this ends its thread and fails (default 20 s). */
  taskTimeoutMs?: number;
  /** Heap of each thread, MiB (default 256). Typed arrays live outside it; AUDIO_BOUNDS caps those. */
  maxHeapMb?: number;
}

interface Job {
  task: AudioTask;
  resolve(result: AudioTaskResult): void;
  reject(error: Error): void;
}

interface Thread {
  worker: Worker;
  job?: Job & { id: number; timer: NodeJS.Timeout };
}

function errorFromThread(error: { message: string; code?: string; limitMs?: number }): Error {
  switch (error.code) {
    case 'unsupported_audio':
      return new UnsupportedAudioError(error.message);
    case 'unreadable_audio':
      return new UnreadableAudioError(error.message);
    case 'clip_too_long':
      return new AudioTooLongError(error.limitMs ?? 0, error.message);
    default:
      return new Error(error.message);
  }
}

/**
 * Decodes untrusted audio and finds speech in it on worker threads, so that no upload, however
 * hostile, can block the event loop or take the process's memory: each thread has a heap limit
 * (`resourceLimits`), each task a time limit, and a thread that dies or overruns is replaced
 * while its task fails as unreadable audio (422). Threads are started once and reused, so a
 * normal decode costs one message round trip more than decoding in place. Tasks beyond the
 * pool's size wait their turn in arrival order.
 */
export class AudioThreadPool {
  private readonly threads: Thread[] = [];
  private readonly queue: Job[] = [];
  private readonly size: number;
  private readonly taskTimeoutMs: number;
  private readonly maxHeapMb: number;
  private nextId = 1;

  constructor(options: AudioThreadPoolOptions = {}) {
    this.size = Math.max(1, options.size ?? Math.min(2, availableParallelism()));
    this.taskTimeoutMs = options.taskTimeoutMs ?? 20_000;
    this.maxHeapMb = options.maxHeapMb ?? 256;
  }

  /** decodeAudio on a worker thread; the same errors (AudioDecodeError subclasses). */
  decode(bytes: Uint8Array, opts: DecodeAudioOptions = {}): Promise<DecodedAudio> {
    return this.submit({ kind: 'decode', bytes, ...opts }) as Promise<DecodedAudio>;
  }

  /** Silero VAD over a decoded clip, on a worker thread. */
  detectSpeech(mono: Float32Array, sampleRate: number): Promise<SpeechDetection> {
    return this.submit({ kind: 'detectSpeech', mono, sampleRate }) as Promise<SpeechDetection>;
  }

  /**
   * Loads the voice-activity model on a thread now (onnxruntime's WebAssembly and Silero's
   * weights: seconds on a small machine), so that the first `detectSpeech` does not pay for it.
   * The loaded thread stays in the pool, idle threads do not keep the process alive.
   */
  async loadSpeechModel(): Promise<void> {
    await this.submit({ kind: 'loadSpeechModel' });
  }

  /** Ends every thread; queued and running tasks fail. A later task starts new threads. */
  async close(): Promise<void> {
    const threads = this.threads.splice(0);
    const queued = this.queue.splice(0);
    for (const job of queued) job.reject(new Error('audio thread pool closed'));
    await Promise.all(
      threads.map(async (t) => {
        const job = t.job;
        t.job = undefined;
        if (job) {
          clearTimeout(job.timer);
          job.reject(new Error('audio thread pool closed'));
        }
        await t.worker.terminate();
      }),
    );
  }

  private submit(task: AudioTask): Promise<AudioTaskResult> {
    return new Promise((resolve, reject) => {
      this.queue.push({ task, resolve, reject });
      this.dispatch();
    });
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      let thread = this.threads.find((t) => !t.job);
      if (!thread) {
        if (this.threads.length >= this.size) return;
        thread = this.spawn();
      }
      const job = this.queue.shift()!;
      const id = this.nextId++;
      const timer = setTimeout(() => this.fail(thread, this.timeoutError()), this.taskTimeoutMs);
      thread.job = { ...job, id, timer };
      thread.worker.ref();
      thread.worker.postMessage({ id, task: job.task });
    }
  }

  private timeoutError(): AudioDecodeError {
    return new UnreadableAudioError(
      `the audio took longer than ${this.taskTimeoutMs / 1000} s to process`,
    );
  }

  private spawn(): Thread {
    const worker = startWorkerThread(
      childScript(import.meta.url, './audioThread.ts', 'audioThread'),
      { maxOldGenerationSizeMb: this.maxHeapMb },
    );
    const thread: Thread = { worker };
    worker.on('message', (reply: AudioThreadReply) => {
      const job = thread.job;
      if (!job || job.id !== reply.id) return;
      clearTimeout(job.timer);
      thread.job = undefined;
      worker.unref();
      if ('error' in reply) job.reject(errorFromThread(reply.error));
      else job.resolve(reply.result);
      this.dispatch();
    });
    worker.on('error', (error: Error & { code?: string }) => {
      const reason =
        error.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? new UnreadableAudioError('the audio needs more memory to decode than is allowed')
          : new UnreadableAudioError(`the audio could not be processed: ${error.message}`);
      this.fail(thread, reason);
    });
    worker.on('exit', () => this.fail(thread, new UnreadableAudioError('the audio thread ended')));
    worker.unref();
    this.threads.push(thread);
    return thread;
  }

  /** Drops a thread (ending it if it still runs) and fails its task; queued tasks go on. */
  private fail(thread: Thread, error: Error): void {
    const index = this.threads.indexOf(thread);
    if (index >= 0) this.threads.splice(index, 1);
    const job = thread.job;
    thread.job = undefined;
    if (job) {
      clearTimeout(job.timer);
      job.reject(error);
    }
    void thread.worker.terminate();
    this.dispatch();
  }
}

let decoding: AudioThreadPool | undefined;
let speech: AudioThreadPool | undefined;

/**
 * The process's pool for decoding, started on first use (its idle threads do not keep the
 * process alive).
 */
export function audioThreadPool(): AudioThreadPool {
  decoding ??= new AudioThreadPool();
  return decoding;
}

/**
 * The process's pool for speech detection: one thread, so the VAD model (onnxruntime's
 * WebAssembly, about 14 MB to compile) is loaded once per process, not once per thread.
 */
export function speechThreadPool(): AudioThreadPool {
  speech ??= new AudioThreadPool({ size: 1 });
  return speech;
}
