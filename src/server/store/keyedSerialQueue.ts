// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * Runs tasks one at a time per key, in the order they came, and tasks of different keys
 * independently. Nothing is kept for a key with no task waiting or running.
 */
export class KeyedSerialQueue {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const before = this.tails.get(key) ?? Promise.resolve();
    const turn = before.then(task, task);
    // The tail never rejects (a failed task does not fail the next one's turn).
    const tail = turn.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return turn;
  }
}
