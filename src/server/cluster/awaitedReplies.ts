// SPDX-License-Identifier: GPL-3.0-or-later
import { randomBytes } from 'node:crypto';
import type { ClusterStore } from '../store/clusterStore.js';

/** How often a node waiting for a reply also reads it from its row (a NOTIFY may be lost). */
const REPLY_POLL_MS = 1_000;

/** The node that runs a session did not answer in time. */
export class ReplyTimeoutError extends Error {
  constructor(kind: string, nodeId: string) {
    super(`node ${nodeId} did not answer the ${kind} in time`);
    this.name = 'ReplyTimeoutError';
  }
}

/** A reply this node listens for (see AwaitedReplies.expect). */
export interface ExpectedReply {
  /** The reply, or ReplyTimeoutError after `timeoutMs`. */
  wait(kind: string, nodeId: string, timeoutMs: number): Promise<unknown>;
  forget(): void;
}

/** A fresh command id (the sender picks it, to wait for the reply before inserting). */
export function newCommandId(): string {
  return `cmd_${randomBytes(12).toString('base64url')}`;
}

interface PendingReply {
  resolve(reply: unknown): void;
  reject(err: Error): void;
  poll?: NodeJS.Timeout;
  timer?: NodeJS.Timeout;
}

/**
 * The replies this node waits for, to the commands it handed to other nodes: each comes in a
 * NOTIFY, or is read from the command's row (polled, since a NOTIFY may be lost).
 */
export class AwaitedReplies {
  private readonly pending = new Map<string, PendingReply>();

  constructor(private readonly db: ClusterStore) {}

  /**
   * Listens for the reply to command `id` from now on: before the command is inserted, since
   * the reply may come back before the INSERT's own answer does. `wait` then bounds the wait
   * and also reads the reply from its row now and then (a NOTIFY may be lost); `forget` stops.
   */
  expect(id: string): ExpectedReply {
    let resolve!: (reply: unknown) => void;
    let reject!: (err: Error) => void;
    const settled = new Promise<unknown>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    settled.catch(() => undefined); // observed through wait()
    // The row stays a minute after its reply (the sweep deletes it).
    const pending: PendingReply = { resolve, reject };
    this.pending.set(id, pending);
    return {
      wait: (kind, nodeId, timeoutMs) => {
        if (this.pending.get(id) === pending) {
          pending.poll = setInterval(() => this.readRow(id), REPLY_POLL_MS);
          pending.poll.unref();
          pending.timer = setTimeout(
            () => this.settle(id, (p) => p.reject(new ReplyTimeoutError(kind, nodeId))),
            timeoutMs,
          );
        }
        return settled;
      },
      forget: () => this.settle(id, () => undefined),
    };
  }

  /** The reply to command `id` came (in its NOTIFY). */
  resolve(id: string, reply: unknown): void {
    this.settle(id, (p) => p.resolve(reply));
  }

  /** The reply to command `id` is in its row (the NOTIFY was too large to carry it). */
  readRow(id: string): void {
    void this.db.replyOf(id).then(
      (found) => found && this.settle(id, (p) => p.resolve(found.reply)),
      () => undefined, // the database is away; the NOTIFY or the next poll will do
    );
  }

  /** Every reply still awaited fails, saying `why` (this node is leaving). */
  rejectAll(why: string): void {
    for (const id of [...this.pending.keys()]) this.settle(id, (p) => p.reject(new Error(why)));
  }

  private settle(id: string, how: (p: PendingReply) => void): void {
    const pending = this.pending.get(id);
    if (!pending) return;
    this.pending.delete(id);
    clearInterval(pending.poll);
    clearTimeout(pending.timer);
    how(pending);
  }
}
