// SPDX-License-Identifier: GPL-3.0-or-later
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { ThreadPool, type ThreadPoolOptions } from '../../src/threads/threadPool.js';

/**
 * The one thread pool the audio, photo and espeak threads run on: real worker threads running a
 * small script that answers, fails, streams, hangs, exits, throws or runs out of heap on demand.
 */
const SCRIPT = `
const { parentPort, threadId } = require('node:worker_threads');
parentPort.on('message', ({ id, task }) => {
  switch (task.kind) {
    case 'echo': return parentPort.postMessage({ id, result: { value: task.value, threadId } });
    case 'fail': return parentPort.postMessage({ id, error: task.message });
    case 'parts':
      for (let i = 0; i < 3; i++) parentPort.postMessage({ id, part: i });
      return parentPort.postMessage({ id, result: { value: 'done', threadId } });
    case 'hang': return;
    case 'exit': return process.exit(3);
    case 'throw': return setImmediate(() => { throw new Error('boom'); });
    case 'oom': { const held = []; for (;;) held.push(new Array(100000).fill({ a: 1 })); }
  }
});
`;

type Task =
  | { kind: 'echo'; value: number }
  | { kind: 'fail'; message: string }
  | { kind: 'parts' | 'hang' | 'exit' | 'throw' | 'oom' };
interface Result {
  value: number | string;
  threadId: number;
}

const pools: ThreadPool<Task, Result, string, number>[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

function pool(options: Partial<ThreadPoolOptions<string>> = {}) {
  const made = new ThreadPool<Task, Result, string, number>({
    startThread: () =>
      new Worker(SCRIPT, { eval: true, resourceLimits: { maxOldGenerationSizeMb: 32 } }),
    errors: {
      fromThread: (message) => new Error(`thread: ${message}`),
      timeout: (limitMs) => new Error(`timeout after ${limitMs} ms`),
      crashed: (error) => new Error(`crashed: ${error.code ?? error.message}`),
      exited: (code) => new Error(`exited ${code}`),
      closed: () => new Error('closed'),
      busy: (maxQueue) => new Error(`busy (${maxQueue} queued)`),
    },
    ...options,
  });
  pools.push(made);
  return made;
}

describe('ThreadPool', () => {
  it('runs tasks on at most `size` threads, reusing them, and answers each its own result', async () => {
    const p = pool({ size: 2 });
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => p.run({ kind: 'echo', value: i })),
    );
    expect(results.map((r) => r.value)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(new Set(results.map((r) => r.threadId)).size).toBe(2);
    expect(p.threadCount).toBe(2);
  });

  it("fails a task with the thread's own error, and the thread serves the next task", async () => {
    const p = pool();
    await expect(p.run({ kind: 'fail', message: 'no' })).rejects.toThrow('thread: no');
    const first = await p.run({ kind: 'echo', value: 1 });
    const second = await p.run({ kind: 'echo', value: 2 });
    expect(second.threadId).toBe(first.threadId);
  });

  it('passes the parts a thread posts before its result', async () => {
    const parts: number[] = [];
    const result = await pool().run({ kind: 'parts' }, (part) => parts.push(part));
    expect(parts).toEqual([0, 1, 2]);
    expect(result.value).toBe('done');
  });

  it.each([
    ['exits', 'exit', 'exited 3'],
    ['throws', 'throw', 'crashed: boom'],
    ['runs out of heap', 'oom', 'crashed: ERR_WORKER_OUT_OF_MEMORY'],
  ] as const)(
    'a thread that %s fails its task; the queued task runs on a fresh thread',
    async (_, kind, error) => {
      const p = pool();
      const before = await p.run({ kind: 'echo', value: 0 });
      const failing = expect(p.run({ kind })).rejects.toThrow(error);
      const queued = p.run({ kind: 'echo', value: 1 });
      await failing;
      const after = await queued;
      expect(after.value).toBe(1);
      expect(after.threadId).not.toBe(before.threadId);
      expect(p.threadCount).toBe(1);
    },
    60_000,
  );

  it('ends a thread whose task overruns its time limit, and goes on with a fresh one', async () => {
    // The limit counts from dispatch, a fresh thread's start included: 5 s leaves a busy machine room.
    const p = pool({ taskTimeoutMs: 5_000 });
    const before = await p.run({ kind: 'echo', value: 0 });
    await expect(p.run({ kind: 'hang' })).rejects.toThrow('timeout after 5000 ms');
    const after = await p.run({ kind: 'echo', value: 1 });
    expect(after.threadId).not.toBe(before.threadId);
  });

  it('refuses a task beyond `maxQueue` waiting ones, at once', async () => {
    const p = pool({ maxQueue: 2 });
    const closed = [
      p.run({ kind: 'hang' }),
      p.run({ kind: 'echo', value: 1 }),
      p.run({ kind: 'echo', value: 2 }),
    ].map((task) => expect(task).rejects.toThrow('closed'));
    await expect(p.run({ kind: 'echo', value: 3 })).rejects.toThrow('busy (2 queued)');
    await p.close();
    await Promise.all(closed);
  });

  it('close() fails running and queued tasks; a later task starts a new thread', async () => {
    const p = pool();
    const running = expect(p.run({ kind: 'hang' })).rejects.toThrow('closed');
    const queued = expect(p.run({ kind: 'echo', value: 1 })).rejects.toThrow('closed');
    await p.close();
    await running;
    await queued;
    expect(p.threadCount).toBe(0);
    expect((await p.run({ kind: 'echo', value: 2 })).value).toBe(2);
  });

  it('ends a thread that stays idle for `idleMs`', async () => {
    const p = pool({ idleMs: 50 });
    await p.run({ kind: 'echo', value: 1 });
    await expect.poll(() => p.threadCount, { timeout: 30_000 }).toBe(0);
    expect((await p.run({ kind: 'echo', value: 2 })).value).toBe(2);
  });

  it('fails a task whose thread cannot start, and starts one for the next task', async () => {
    let starts = 0;
    const p = pool({
      startThread: () => {
        if (starts++ === 1) throw new Error('no script');
        return new Worker(SCRIPT, { eval: true });
      },
    });
    // The first thread exits; its replacement, started for the queued task, cannot start.
    const exiting = expect(p.run({ kind: 'exit' })).rejects.toThrow('exited 3');
    const queued = expect(p.run({ kind: 'echo', value: 1 })).rejects.toThrow('no script');
    await exiting;
    await queued;
    expect((await p.run({ kind: 'echo', value: 2 })).value).toBe(2);
  });

  it('tells when it starts a thread (its state starts fresh)', async () => {
    let started = 0;
    const p = pool({ onThreadStart: () => started++ });
    await p.run({ kind: 'echo', value: 1 });
    await p.run({ kind: 'echo', value: 2 });
    await expect(p.run({ kind: 'exit' })).rejects.toThrow('exited 3');
    await p.run({ kind: 'echo', value: 3 });
    expect(started).toBe(2);
  });
});
