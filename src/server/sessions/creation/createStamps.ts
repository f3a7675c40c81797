// SPDX-License-Identifier: GPL-3.0-or-later
import type { Stamps } from '../../store/store.js';

/**
 * Where one create's time went: each phase's milliseconds since the phase before it, for the
 * `create timing` debug line (docs/health-and-bursts.md). A clock read per phase, nothing more.
 */
export class CreateStamps implements Stamps {
  private last = performance.now();
  private readonly spent: Record<string, number> = {};

  /** The phase `name` ended now. */
  mark(name: string): void {
    const now = performance.now();
    this.spent[name] = Math.round((now - this.last) * 10) / 10;
    this.last = now;
  }

  phases(): Readonly<Record<string, number>> {
    return this.spent;
  }
}
