// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * Messages from a provider's socket for one utterance, read with `await next()`. `end` and
 * `fail` finish the queue; an aborted signal makes `next` return undefined at once.
 */
export class MessageQueue<T> {
  private items: T[] = [];
  private waiter: (() => void) | undefined;
  private ended = false;
  private error: Error | undefined;

  push(item: T): void {
    if (this.ended) return;
    this.items.push(item);
    this.wake();
  }

  end(): void {
    this.ended = true;
    this.wake();
  }

  fail(error: Error): void {
    if (this.ended) return;
    this.error = error;
    this.ended = true;
    this.wake();
  }

  /** The next message; undefined when the queue ended or `signal` aborted. Throws a failure. */
  async next(signal: AbortSignal): Promise<T | undefined> {
    for (;;) {
      if (signal.aborted) return undefined;
      const item = this.items.shift();
      if (item !== undefined) return item;
      if (this.error) throw this.error;
      if (this.ended) return undefined;
      await new Promise<void>((resolve) => {
        const onAbort = () => resolve();
        signal.addEventListener('abort', onAbort, { once: true });
        this.waiter = () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        };
      });
      this.waiter = undefined;
    }
  }

  private wake(): void {
    this.waiter?.();
  }
}
