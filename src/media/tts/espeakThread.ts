// SPDX-License-Identifier: GPL-3.0-or-later
import { Worker } from 'node:worker_threads';
import {
  espeakModuleUrl,
  rawEspeakSynthesis,
  type EspeakEvent,
  type RawSynthesisRequest,
  type RawSynthesisResult,
} from './espeakRuntime.js';

/**
 * espeak-ng on its own worker thread, so synthesis (15-50 ms a sentence, more for long chunks)
 * never blocks the event loop that paces audio and renders video. One thread per process,
 * shared by all off-thread EspeakEngines; requests are served in order.
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
parentPort.on('message', async ({ id, request, stream }) => {
  try {
    const onPart = stream ? (pcm, sampleRate, events) => parentPort.postMessage({ id, part: pcm, sampleRate, events }, [pcm.buffer]) : undefined;
    const result = rawEspeakSynthesis(await ready, request, onPart);
    parentPort.postMessage({ id, result }, [result.pcm.buffer]);
  } catch (error) {
    parentPort.postMessage({ id, error: String((error && error.message) || error) });
  }
});
`;

/** A piece of audio as espeak-ng produced it, with the events it reported with that piece. */
type PartListener = (pcm: Int16Array, sampleRate: number, events: EspeakEvent[]) => void;

interface Pending {
  resolve(result: RawSynthesisResult): void;
  reject(error: Error): void;
  onPart: PartListener | undefined;
}

type Reply =
  | { id: number; result: RawSynthesisResult }
  | { id: number; part: Int16Array; sampleRate: number; events: EspeakEvent[] }
  | { id: number; error: string };

const WARM_MS = 40;

export class EspeakThread {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
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
    this.start();
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
    const worker = this.start();
    const id = this.nextId++;
    return new Promise<RawSynthesisResult>((resolve, reject) => {
      this.pending.set(id, { resolve, reject, onPart });
      worker.ref(); // keep the process alive while a request is out
      worker.postMessage({ id, request, stream: onPart !== undefined });
    });
  }

  /** Stop the thread; outstanding requests reject. A later request starts a new one. */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    this.failAll(new Error('espeak thread closed'));
    if (worker) await worker.terminate();
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    this.warmed = undefined; // a new thread starts cold
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { moduleUrl: espeakModuleUrl() },
    });
    worker.on('message', (reply: Reply) => {
      const pending = this.pending.get(reply.id);
      if (!pending) return;
      if ('part' in reply) {
        pending.onPart?.(reply.part, reply.sampleRate, reply.events);
        return;
      }
      this.pending.delete(reply.id);
      if (this.pending.size === 0) worker.unref(); // idle: do not hold the process open
      if ('error' in reply) pending.reject(new Error(reply.error));
      else pending.resolve(reply.result);
    });
    const onGone = (error: Error) => {
      if (this.worker === worker) this.worker = undefined;
      this.failAll(error);
    };
    worker.on('error', onGone);
    worker.on('exit', (code) => onGone(new Error(`espeak thread exited with code ${code}`)));
    worker.unref();
    this.worker = worker;
    return worker;
  }

  private failAll(error: Error): void {
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const p of pending) p.reject(error);
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
