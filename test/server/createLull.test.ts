// SPDX-License-Identifier: GPL-3.0-or-later
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CreateLull } from '../../src/server/http/createLull.js';

describe('CreateLull', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  /** Whether `after` has resolved once the fake clock stands at `ms`. */
  function watch(promise: Promise<void>) {
    let done = false;
    void promise.then(() => (done = true));
    return { done: () => done };
  }

  it('waits the lull from its start when no create comes', async () => {
    const lull = new CreateLull(() => Date.now());
    lull.start();
    const waited = watch(lull.after(3_000));
    await vi.advanceTimersByTimeAsync(2_900);
    expect(waited.done()).toBe(false);
    await vi.advanceTimersByTimeAsync(200);
    expect(waited.done()).toBe(true);
  });

  it('waits again after each create, until none came for the whole lull', async () => {
    const lull = new CreateLull(() => Date.now());
    lull.start();
    const waited = watch(lull.after(3_000));
    for (let i = 0; i < 5; i++) {
      await vi.advanceTimersByTimeAsync(2_000);
      lull.seen(); // a burst's creates, 2 s apart: never a 3 s lull
    }
    expect(waited.done()).toBe(false);
    await vi.advanceTimersByTimeAsync(2_900);
    expect(waited.done()).toBe(false);
    await vi.advanceTimersByTimeAsync(200);
    expect(waited.done()).toBe(true);
  });

  it('counts the creates it saw, not its start (the database warm-up stops at the first)', () => {
    const lull = new CreateLull(() => Date.now());
    lull.start();
    expect(lull.creates).toBe(0);
    lull.seen();
    lull.seen();
    expect(lull.creates).toBe(2);
  });

  it('answers at once when the lull is already over', async () => {
    const lull = new CreateLull(() => Date.now());
    await vi.advanceTimersByTimeAsync(5_000);
    const waited = watch(lull.after(3_000));
    await vi.advanceTimersByTimeAsync(0);
    expect(waited.done()).toBe(true);
  });
});
