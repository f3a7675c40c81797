// SPDX-License-Identifier: GPL-3.0-or-later
import { Worker } from 'node:worker_threads';
import {
  espeakModuleUrl,
  rawEspeakSynthesis,
  type EspeakEvent,
  type RawSynthesisRequest,
  type RawSynthesisResult,
} from './espeakRuntime.js';
import { ThreadPool } from '../../threads/threadPool.js';

/**
 * espeak-ng on its own worker thread, so synthesis (15-50 ms a sentence, more for long chunks)
 * never blocks the event loop that paces audio and renders video. One thread per process,
 * shared by all off-thread EspeakEngines; requests are served one at a time, in order.
 *
 * The worker is created from source text (eval), not from a file: this works the same from the
 * TypeScript sources under vitest/tsx and from the bundled dist/, with no extra build entry. Its
 * synthesis code is `rawEspeakSynthesis` itself, sent as source text.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const rawEspeakSynthesis = ${rawEspeakSynthesis.toString()};
const ready = import(workerData.moduleUrl).then(async ({ default: createModule }) => {
  const module = await createModule();
  const worker = new module.eSpeakNGWorker();
  return { module, worker, sampleRate: worker.samplerate, variants: new Set() };
});
ready.catch(() => {});
parentPort.on('message', async ({ id, task: { request, stream } }) => {
  try {
    const onPart = stream ? (pcm, sampleRate, events) => parentPort.postMessage({ id, part: { pcm, sampleRate, events } }, [pcm.buffer]) : undefined;
    const result = rawEspeakSynthesis(await ready, request, onPart);
    parentPort.postMessage({ id, result }, [result.pcm.buffer]);
  } catch (error) {
    parentPort.postMessage({ id, error: String((error && error.message) || error) });
  }
});
`;

/** A piece of audio as espeak-ng produced it, with the events it reported with that piece. */
type PartListener = (pcm: Int16Array, sampleRate: number, events: EspeakEvent[]) => void;

interface EspeakTask {
  request: RawSynthesisRequest;
  stream: boolean;
}

interface EspeakPart {
  pcm: Int16Array;
  sampleRate: number;
  events: EspeakEvent[];
}

const WARM_MS = 40;

/**
 * A ThreadPool of one thread with no time or heap limit (as espeak-ng ran on the main thread
 * before): espeak-ng's WebAssembly keeps global state (its voice), so one thread serves every
 * request, one at a time, in order. A thread that dies fails its request and the next request
 * starts a fresh one.
 */
export class EspeakThread {
  private readonly pool = new ThreadPool<EspeakTask, RawSynthesisResult, string, EspeakPart>({
    size: 1,
    startThread: () =>
      new Worker(WORKER_SOURCE, { eval: true, workerData: { moduleUrl: espeakModuleUrl() } }),
    onThreadStart: () => (this.warmed = undefined), // a new thread starts cold
    errors: {
      fromThread: (message) => new Error(message),
      timeout: () => new Error('espeak thread timed out'), // no limit is set
      crashed: (error) => error,
      exited: (code) => new Error(`espeak thread exited with code ${code}`),
      closed: () => new Error('espeak thread closed'),
      busy: () => new Error('espeak thread busy'), // no bound is set
    },
  });
  private warmed: { firstRun: Promise<void>; all: Promise<void> } | undefined;

  /**
   * Start the thread and synthesize until its JIT has optimised espeak (two consecutive runs
   * under 40 ms, at most 12). Shared: later calls wait for the same warm-up. `firstRun`: resolve
   * once espeak-ng has loaded and spoken the first run (the rest goes on behind it).
   */
  warmUp(
    request: (index: number) => RawSynthesisRequest,
    { firstRun = false } = {},
  ): Promise<void> {
    if (this.pool.threadCount === 0) this.warmed = undefined; // the next thread starts cold
    if (!this.warmed) {
      let ranOnce!: () => void;
      const first = new Promise<void>((resolve) => (ranOnce = resolve));
      const all = (async () => {
        let fast = 0;
        for (let i = 0; i < 12 && fast < 2; i++) {
          const started = performance.now();
          await this.synthesize(request(i));
          ranOnce();
          fast = performance.now() - started < WARM_MS ? fast + 1 : 0;
        }
      })();
      const warmed = { firstRun: Promise.race([first, all]), all };
      all.catch(() => {
        if (this.warmed === warmed) this.warmed = undefined;
      });
      this.warmed = warmed;
    }
    return firstRun ? this.warmed.firstRun : this.warmed.all;
  }

  /**
   * Synthesize on the thread. `onPart`, when given, receives each 100 ms buffer of audio as soon as
   * espeak-ng produced it (the first one about 5-15 ms into a sentence that takes 20-50 ms) with
   * its events, and the result still carries the whole audio with all the events.
   */
  synthesize(request: RawSynthesisRequest, onPart?: PartListener): Promise<RawSynthesisResult> {
    return this.pool.run(
      { request, stream: onPart !== undefined },
      onPart && ((part) => onPart(part.pcm, part.sampleRate, part.events)),
    );
  }

  /** Stop the thread; outstanding requests reject. A later request starts a new one. */
  close(): Promise<void> {
    return this.pool.close();
  }
}

let shared: EspeakThread | undefined;

/** The process-wide espeak thread. */
export function sharedEspeakThread(): EspeakThread {
  shared ??= new EspeakThread();
  return shared;
}

/**
 * Stop the process-wide espeak thread (at shutdown; outstanding requests reject). The next
 * off-thread synthesis starts a fresh, cold thread.
 */
export async function stopEspeakThread(): Promise<void> {
  await shared?.close();
}
