// SPDX-License-Identifier: Apache-2.0
import type { InterruptResult, UtteranceAccepted } from '@visage-avatar/client/api';
import { type VisageClient, VisageConflictError } from '@visage-avatar/client';
import { pluginLog } from './log.js';

type Kind = 'speak' | 'interrupt' | 'waiting';

interface Command {
  kind: Kind;
  run: () => Promise<unknown>;
  settle: (value: unknown, error?: unknown) => void;
}

/**
 * The driving requests of one Visage session, sent strictly one after another in the order they
 * were made, so the service sees `waiting_state false` before the `/speak` it precedes and a
 * `/speak` never overtakes an `/interrupt`.
 *
 * An interrupt is urgent: it drops the speaks still queued (they resolve `undefined`) and goes
 * next, right after the request already on the wire. A session the service has ended turns every
 * later call into a no-op instead of a stream of errors.
 */
export class SessionCommandQueue {
  readonly #client: VisageClient;
  readonly #sessionId: string;
  readonly #timeoutMs: number;
  readonly #queue: Command[] = [];
  #running = false;
  #closed = false;
  #ended = false;
  /** The waiting state the session will be in once every queued command has run. */
  #parked = false;
  #drained: Array<() => void> = [];

  constructor(client: VisageClient, sessionId: string, options: { timeoutMs: number }) {
    this.#client = client;
    this.#sessionId = sessionId;
    this.#timeoutMs = options.timeoutMs;
  }

  get sessionId(): string {
    return this.#sessionId;
  }

  /** Whether the session is (or is about to be) parked. */
  get parked(): boolean {
    return this.#parked;
  }

  /** True once the service reported the session ended (409 session_ended). */
  get ended(): boolean {
    return this.#ended;
  }

  /** Queues a sentence; a parked session is resumed first. `undefined` if dropped or closed. */
  speak(text: string): Promise<UtteranceAccepted | undefined> {
    this.setWaiting(false).catch(() => undefined);
    return this.#enqueue<UtteranceAccepted>('speak', () => this.#speakResumingOnce(text));
  }

  /** Parks (`true`) or resumes (`false`); a no-op when that is already the queued state. */
  setWaiting(waiting: boolean): Promise<void> {
    if (this.#parked === waiting) return Promise.resolve();
    this.#parked = waiting;
    return this.#enqueue('waiting', () => this.#setWaiting(waiting)).then(() => undefined);
  }

  /** Drops queued speaks and sends `/interrupt` next. `undefined` when closed or ended. */
  interrupt(): Promise<InterruptResult | undefined> {
    if (this.#closed || this.#ended) return Promise.resolve(undefined);
    for (let i = this.#queue.length - 1; i >= 0; i--) {
      const command = this.#queue[i]!;
      if (command.kind !== 'speak') continue;
      this.#queue.splice(i, 1);
      command.settle(undefined);
    }
    return this.#enqueue<InterruptResult>(
      'interrupt',
      () => this.#client.sessions.interrupt(this.#sessionId, this.#options()),
      { first: true },
    );
  }

  /** Resolves once nothing is queued or in flight. */
  whenIdle(): Promise<void> {
    if (!this.#running && this.#queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.#drained.push(resolve));
  }

  /** Drops everything queued; later calls resolve `undefined` at once. */
  close(): void {
    this.#closed = true;
    for (const command of this.#queue.splice(0)) command.settle(undefined);
  }

  #enqueue<T>(kind: Kind, run: () => Promise<T>, opts: { first?: boolean } = {}) {
    if (this.#closed || this.#ended) return Promise.resolve(undefined);
    return new Promise<T | undefined>((resolve, reject) => {
      const command: Command = {
        kind,
        run,
        settle: (value, error) => (error === undefined ? resolve(value as T) : reject(error)),
      };
      if (opts.first) this.#queue.unshift(command);
      else this.#queue.push(command);
      void this.#pump();
    });
  }

  async #pump(): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    try {
      for (let command = this.#queue.shift(); command; command = this.#queue.shift()) {
        if (this.#ended) {
          command.settle(undefined);
          continue;
        }
        try {
          command.settle(await command.run());
        } catch (err) {
          if (err instanceof VisageConflictError && err.code === 'session_ended') {
            this.#markEnded();
            command.settle(undefined);
          } else {
            command.settle(undefined, err);
          }
        }
      }
    } finally {
      this.#running = false;
      for (const resolve of this.#drained.splice(0)) resolve();
    }
  }

  /** A speak refused because someone else parked the session resumes it and tries once more. */
  async #speakResumingOnce(text: string): Promise<UtteranceAccepted> {
    try {
      return await this.#client.sessions.speak(this.#sessionId, text, this.#options());
    } catch (err) {
      if (!(err instanceof VisageConflictError) || err.code !== 'session_waiting') throw err;
      pluginLog().warn('the Visage session was parked from elsewhere; resuming it to speak');
      await this.#setWaiting(false);
      this.#parked = false;
      return this.#client.sessions.speak(this.#sessionId, text, this.#options());
    }
  }

  async #setWaiting(waiting: boolean): Promise<void> {
    await this.#client.sessions.setWaiting(this.#sessionId, waiting, this.#options());
  }

  #markEnded(): void {
    if (this.#ended) return;
    this.#ended = true;
    pluginLog().error(
      { session_id: this.#sessionId },
      'the Visage session has ended on the service side; the avatar will not speak any more',
    );
  }

  #options() {
    return { timeoutMs: this.#timeoutMs };
  }
}
