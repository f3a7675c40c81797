// SPDX-License-Identifier: GPL-3.0-or-later
import { availableParallelism } from 'node:os';
import {
  AudioTooLongError,
  UnreadableAudioError,
  UnsupportedAudioError,
  type DecodedAudio,
  type DecodeAudioOptions,
} from '../audio/index.js';
import type { SpeechDetection } from '../voiceActivity/index.js';
import { startWorkerThread, childScript } from '../../threads/childScript.js';
import { ThreadPool } from '../../threads/threadPool.js';
import type { AudioTask, AudioTaskResult, AudioThreadReply } from './audioThreadProtocol.js';

export interface AudioThreadPoolOptions {
  /** Threads (default: 2, or 1 on a single core). */
  size?: number;
  /** A task running longer than this ends its thread and fails (default 20 s). */
  taskTimeoutMs?: number;
  /** Heap of each thread, MiB (default 256). Typed arrays live outside it; AUDIO_BOUNDS caps those. */
  maxHeapMb?: number;
}

type AudioThreadError = Extract<AudioThreadReply, { error: unknown }>['error'];

function errorFromThread(error: AudioThreadError): Error {
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
 * pool's size wait their turn in arrival order. (A ThreadPool: restart, queue and shutdown.)
 */
export class AudioThreadPool {
  private readonly pool: ThreadPool<AudioTask, AudioTaskResult, AudioThreadError>;

  constructor(options: AudioThreadPoolOptions = {}) {
    const taskTimeoutMs = options.taskTimeoutMs ?? 20_000;
    const maxHeapMb = options.maxHeapMb ?? 256;
    this.pool = new ThreadPool({
      size: options.size ?? Math.min(2, availableParallelism()),
      taskTimeoutMs,
      startThread: () =>
        startWorkerThread(childScript(import.meta.url, './audioThread.ts', 'audioThread'), {
          maxOldGenerationSizeMb: maxHeapMb,
        }),
      errors: {
        fromThread: errorFromThread,
        timeout: (limitMs) =>
          new UnreadableAudioError(`the audio took longer than ${limitMs / 1000} s to process`),
        crashed: (error) =>
          error.code === 'ERR_WORKER_OUT_OF_MEMORY'
            ? new UnreadableAudioError('the audio needs more memory to decode than is allowed')
            : new UnreadableAudioError(`the audio could not be processed: ${error.message}`),
        exited: () => new UnreadableAudioError('the audio thread ended'),
        closed: () => new Error('audio thread pool closed'),
        busy: () => new Error('audio thread pool busy'),
      },
    });
  }

  /** decodeAudio on a worker thread; the same errors (AudioDecodeError subclasses). */
  decode(bytes: Uint8Array, opts: DecodeAudioOptions = {}): Promise<DecodedAudio> {
    return this.pool.run({ kind: 'decode', bytes, ...opts }) as Promise<DecodedAudio>;
  }

  /** Silero VAD over a decoded clip, on a worker thread. */
  detectSpeech(mono: Float32Array, sampleRate: number): Promise<SpeechDetection> {
    return this.pool.run({ kind: 'detectSpeech', mono, sampleRate }) as Promise<SpeechDetection>;
  }

  /**
   * Loads the voice-activity model on a thread now (onnxruntime's WebAssembly and Silero's
   * weights: seconds on a small machine), so that the first `detectSpeech` does not pay for it.
   * The loaded thread stays in the pool, idle threads do not keep the process alive.
   */
  async loadSpeechModel(): Promise<void> {
    await this.pool.run({ kind: 'loadSpeechModel' });
  }

  /** Ends every thread; queued and running tasks fail. A later task starts new threads. */
  close(): Promise<void> {
    return this.pool.close();
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
