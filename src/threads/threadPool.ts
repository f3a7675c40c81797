// SPDX-License-Identifier: GPL-3.0-or-later
import type { Worker } from 'node:worker_threads';

/**
 * What a pool's thread posts back for a task: its result, its error (in whatever shape that
 * thread reports errors), or a part of the result ahead of the end (a streamed piece of audio).
 */
export type ThreadReply<Result, ThreadError, Part = never> =
  { id: number; result: Result } | { id: number; error: ThreadError } | { id: number; part: Part };

/** The errors a pool fails tasks with, in the words of what the pool does (audio, photo...). */
export interface ThreadPoolErrors<ThreadError> {
  /** The thread reported that the task failed. */
  fromThread(error: ThreadError): Error;
  /** The task ran past `taskTimeoutMs`; its thread is ended. */
  timeout(limitMs: number): Error;
  /** The thread died: out of its heap limit (`ERR_WORKER_OUT_OF_MEMORY`) or an uncaught error. */
  crashed(error: Error & { code?: string }): Error;
  /** The thread exited while running the task. */
  exited(code: number): Error;
  /** `close()` ended the task, or it was still queued. */
  closed(): Error;
  /** The queue already held `maxQueue` tasks. */
  busy(maxQueue: number): Error;
}

export interface ThreadPoolOptions<ThreadError> {
  /** Starts one thread; it answers `{ id, task }` messages with `ThreadReply`s of that id. */
  startThread(): Worker;
  errors: ThreadPoolErrors<ThreadError>;
  /** Threads at most (default 1). */
  size?: number;
  /** A task running longer than this ends its thread and fails (default: no limit). */
  taskTimeoutMs?: number;
  /** A thread with no work for this long ends (default: it stays until `close()`). */
  idleMs?: number;
  /** Tasks that may wait for a thread; one more fails at once with `errors.busy` (default: no bound). */
  maxQueue?: number;
  /** Called when a thread starts (a fresh thread has none of the state its predecessor built). */
  onThreadStart?(): void;
}

interface Job<Task, Result, Part> {
  task: Task;
  resolve(result: Result): void;
  reject(error: Error): void;
  onPart: ((part: Part) => void) | undefined;
}

interface Thread<Task, Result, Part> {
  worker: Worker;
  job?: Job<Task, Result, Part> & { id: number; timer: NodeJS.Timeout | undefined };
  idleTimer?: NodeJS.Timeout;
}

/**
 * The one way this process runs work on worker threads (audio decoding and speech detection,
 * photo builds, espeak-ng): threads started on first use and reused, one task per thread at a
 * time, further tasks waiting in arrival order (bounded by `maxQueue`), a time limit per task. A
 * thread that dies, overruns or exits is ended and dropped while its task fails; queued tasks go
 * on to a fresh thread. Idle threads do not keep the process alive (a thread is ref'd only while
 * it runs a task). `close()` ends every thread and fails every task; a later task starts anew.
 *
 * Why not piscina or tinypool: both start a thread from a file they import themselves, while our
 * threads run from the TypeScript sources under tsx (tests) or from an eval'd source (espeak), and
 * a task's streamed parts would need a MessagePort per task; see docs/architecture.md.
 */
export class ThreadPool<Task, Result, ThreadError = unknown, Part = never> {
  private readonly threads: Thread<Task, Result, Part>[] = [];
  private readonly queue: Job<Task, Result, Part>[] = [];
  private readonly size: number;
  private readonly maxQueue: number;
  private nextId = 1;

  constructor(private readonly options: ThreadPoolOptions<ThreadError>) {
    this.size = Math.max(1, options.size ?? 1);
    this.maxQueue = options.maxQueue ?? Number.POSITIVE_INFINITY;
  }

  /** Runs `task` on a thread; `onPart` receives the parts the thread posts before its result. */
  run(task: Task, onPart?: (part: Part) => void): Promise<Result> {
    return new Promise((resolve, reject) => {
      if (this.queue.length >= this.maxQueue && !this.hasRoom()) {
        reject(this.options.errors.busy(this.maxQueue));
        return;
      }
      this.queue.push({ task, resolve, reject, onPart });
      this.dispatch();
    });
  }

  /** Threads running now (busy or idle). */
  get threadCount(): number {
    return this.threads.length;
  }

  /** Ends every thread; queued and running tasks fail. A later task starts new threads. */
  async close(): Promise<void> {
    const threads = this.threads.splice(0);
    for (const job of this.queue.splice(0)) job.reject(this.options.errors.closed());
    await Promise.all(
      threads.map(async (thread) => {
        clearTimeout(thread.idleTimer);
        const job = thread.job;
        thread.job = undefined;
        if (job) {
          clearTimeout(job.timer);
          job.reject(this.options.errors.closed());
        }
        await thread.worker.terminate();
      }),
    );
  }

  /** A thread is free or may be started, so a new task will not wait. */
  private hasRoom(): boolean {
    return this.threads.length < this.size || this.threads.some((t) => !t.job);
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      let thread = this.threads.find((t) => !t.job);
      if (!thread) {
        if (this.threads.length >= this.size) return;
        try {
          thread = this.spawn();
        } catch (error) {
          // No thread could start (a script missing from the build): the task fails, not the
          // caller of dispatch (a thread's message handler, a timer).
          this.queue.shift()!.reject(error instanceof Error ? error : new Error(String(error)));
          continue;
        }
      }
      clearTimeout(thread.idleTimer);
      const job = this.queue.shift()!;
      const id = this.nextId++;
      const limitMs = this.options.taskTimeoutMs;
      const running = thread;
      const timer =
        limitMs === undefined
          ? undefined
          : setTimeout(() => this.fail(running, this.options.errors.timeout(limitMs)), limitMs);
      thread.job = { ...job, id, timer };
      thread.worker.ref(); // a running task keeps the process alive
      thread.worker.postMessage({ id, task: job.task });
    }
  }

  private spawn(): Thread<Task, Result, Part> {
    this.options.onThreadStart?.();
    const worker = this.options.startThread();
    const thread: Thread<Task, Result, Part> = { worker };
    worker.on('message', (reply: ThreadReply<Result, ThreadError, Part>) => {
      const job = thread.job;
      if (!job || job.id !== reply.id) return;
      if ('part' in reply) {
        job.onPart?.(reply.part);
        return;
      }
      clearTimeout(job.timer);
      thread.job = undefined;
      worker.unref();
      if ('error' in reply) job.reject(this.options.errors.fromThread(reply.error));
      else job.resolve(reply.result);
      this.dispatch();
      if (!thread.job) this.scheduleIdleEnd(thread);
    });
    worker.on('error', (error: Error & { code?: string }) =>
      this.fail(thread, this.options.errors.crashed(error)),
    );
    worker.on('exit', (code) => this.fail(thread, this.options.errors.exited(code)));
    worker.unref();
    this.threads.push(thread);
    return thread;
  }

  private scheduleIdleEnd(thread: Thread<Task, Result, Part>): void {
    const idleMs = this.options.idleMs;
    if (idleMs === undefined) return;
    clearTimeout(thread.idleTimer);
    thread.idleTimer = setTimeout(() => {
      if (thread.job) return;
      const index = this.threads.indexOf(thread);
      if (index >= 0) this.threads.splice(index, 1);
      void thread.worker.terminate();
    }, idleMs);
    thread.idleTimer.unref();
  }

  /** Drops a thread (ending it if it still runs) and fails its task; queued tasks go on. */
  private fail(thread: Thread<Task, Result, Part>, error: Error): void {
    const index = this.threads.indexOf(thread);
    if (index >= 0) this.threads.splice(index, 1);
    clearTimeout(thread.idleTimer);
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
