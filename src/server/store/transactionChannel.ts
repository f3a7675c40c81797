// SPDX-License-Identifier: GPL-3.0-or-later
import { deserialize, serialize } from 'node:v8';
import type { DatabaseThreadError } from './databaseThreadProtocol.js';

/**
 * A transaction's statements between the API's thread and the embedded database's thread, through
 * shared memory rather than messages. A message's answer waits for a turn of the API's event
 * loop; a create's transaction is about eight statements, each waiting for the last, and it holds
 * PGlite's one connection all along: in a burst, with the loop busy, a transaction held it two to
 * five times as long as the statements took (bench/results/2026-12-01-cold-burst-db-thread.md).
 * Here the API's thread writes a statement, wakes the database's thread (`Atomics.notify`) and
 * sleeps until its answer (`Atomics.wait`, for a bounded time; past it, `Atomics.waitAsync`).
 *
 * One statement at a time, in one buffer: counters of requests and answers, the length of what
 * is in it, and whether an answer too large for it was sent as a message instead.
 */
export type ChannelRequest =
  | { op: 'query'; sql: string; params: unknown[] }
  | { op: 'exec'; sql: string }
  /** The transaction's end: COMMIT or ROLLBACK, answered by the thread's task itself. */
  | { op: 'end'; commit: boolean };

export type ChannelAnswer = { rows: unknown[] } | { done: true } | { error: DatabaseThreadError };

/** What `answerWithin` finds: the answer, or that it comes as a message. */
export type ChannelReply = ChannelAnswer | { asMessage: true };

/** Room for one statement or answer (a create's are a few hundred bytes). */
export const CHANNEL_BYTES = 1 << 20;

/** `Atomics.waitAsync` (Node 16 and later; ES2024's lib, newer than this project's). */
const waitAsync = (
  Atomics as unknown as {
    waitAsync(
      array: Int32Array,
      index: number,
      value: number,
    ): { async: false; value: string } | { async: true; value: Promise<string> };
  }
).waitAsync;

const REQUESTS = 0;
const ANSWERS = 1;
const LENGTH = 2;
const AS_MESSAGE = 3;
const HEADER_BYTES = 16;

export class TransactionChannel {
  private readonly control: Int32Array;
  private readonly bytes: Uint8Array;

  constructor(readonly buffer = new SharedArrayBuffer(HEADER_BYTES + CHANNEL_BYTES)) {
    this.control = new Int32Array(buffer, 0, HEADER_BYTES / 4);
    this.bytes = new Uint8Array(buffer, HEADER_BYTES);
  }

  /** API side: requests sent so far (a transaction's thread reads those after it). */
  get sent(): number {
    return Atomics.load(this.control, REQUESTS);
  }

  /** API side: writes a request and wakes the thread; returns its number. */
  send(request: ChannelRequest): number {
    this.write(serialize(request), 'request');
    const n = Atomics.add(this.control, REQUESTS, 1) + 1;
    Atomics.notify(this.control, REQUESTS);
    return n;
  }

  /** API side: request `n`'s answer if it comes within `waitMs` (sleeping for it), else undefined. */
  answerWithin(n: number, waitMs: number): ChannelReply | undefined {
    const answered = Atomics.load(this.control, ANSWERS);
    if (answered !== n && waitMs > 0) Atomics.wait(this.control, ANSWERS, answered, waitMs);
    return Atomics.load(this.control, ANSWERS) === n ? this.read() : undefined;
  }

  /** API side: request `n`'s answer, waiting without blocking the event loop. */
  async answer(n: number): Promise<ChannelReply> {
    for (;;) {
      const answered = Atomics.load(this.control, ANSWERS);
      if (answered === n) break;
      const wait = waitAsync(this.control, ANSWERS, answered);
      if (wait.async) await wait.value;
    }
    return this.read();
  }

  /** Thread side: sleeps until the request after `seen`, and returns it. */
  next(seen: number): { n: number; request: ChannelRequest } {
    Atomics.wait(this.control, REQUESTS, seen);
    const length = Atomics.load(this.control, LENGTH);
    return {
      n: Atomics.load(this.control, REQUESTS),
      request: deserialize(this.bytes.subarray(0, length)) as ChannelRequest,
    };
  }

  /** Thread side: answers request `n`; an answer too large for the buffer goes by `asMessage`. */
  reply(n: number, answer: ChannelAnswer, asMessage: (answer: ChannelAnswer) => void): void {
    const bytes = serialize(answer);
    if (bytes.byteLength <= this.bytes.byteLength) {
      this.write(bytes, 'answer');
      Atomics.store(this.control, AS_MESSAGE, 0);
    } else {
      asMessage(answer);
      Atomics.store(this.control, AS_MESSAGE, 1);
    }
    Atomics.store(this.control, ANSWERS, n);
    Atomics.notify(this.control, ANSWERS);
  }

  private write(bytes: Uint8Array, what: string): void {
    if (bytes.byteLength > this.bytes.byteLength) {
      throw new Error(
        `a transaction's ${what} of ${bytes.byteLength} bytes is over the ${this.bytes.byteLength} the embedded database's channel holds`,
      );
    }
    this.bytes.set(bytes);
    Atomics.store(this.control, LENGTH, bytes.byteLength);
  }

  private read(): ChannelReply {
    if (Atomics.load(this.control, AS_MESSAGE) === 1) return { asMessage: true };
    const length = Atomics.load(this.control, LENGTH);
    return deserialize(this.bytes.subarray(0, length)) as ChannelAnswer;
  }
}
