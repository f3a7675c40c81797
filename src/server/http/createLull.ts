// SPDX-License-Identifier: GPL-3.0-or-later

/**
 * When this node last saw a session create, so that work it does for itself after its start
 * (the speech model's preload, the stock atlases compressed for browsers) waits for a lull in
 * them. A node that has just started is when a retry storm comes (clients retrying against a
 * node that was down, as soon as it answers again); that work on the same cores made the first
 * burst's refusals and creates wait about 2 s longer
 * (bench/results/2026-11-30-cold-burst.md, "The node's work right after /readyz").
 */
export class CreateLull {
  private last: number;
  private seenCount = 0;

  /** `now`: the clock, ms (tests give their own). The lull counts from the creation. */
  constructor(private readonly now: () => number = () => performance.now()) {
    this.last = now();
  }

  /** A create came (any `POST /v1/sessions`, answered or refused). */
  seen(): void {
    this.last = this.now();
    this.seenCount++;
  }

  /** How many creates came since the node started (the database's warm-up stops at the first). */
  get creates(): number {
    return this.seenCount;
  }

  /**
   * Resolves once no create has come for `ms`, counted from the last one or from `start()`,
   * whichever is later. Its timers do not keep the process alive.
   */
  async after(ms: number): Promise<void> {
    for (;;) {
      const wait = this.last + ms - this.now();
      if (wait <= 0) return;
      await new Promise((resolve) => setTimeout(resolve, wait).unref());
    }
  }

  /** Counts the lull from now (the node became ready): as if a create came now. */
  start(): void {
    this.last = this.now();
  }
}
