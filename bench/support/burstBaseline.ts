// SPDX-License-Identifier: GPL-3.0-or-later
import type { BurstFigures } from './createBurst.js';

/** What a run before the fast refusal gave, printed beside today's figures. */
export interface BurstBaseline {
  /** Where and when it was measured. */
  measured: string;
  figures: Pick<
    BurstFigures,
    | 'rounds'
    | 'refusedP50Ms'
    | 'refusedP90Ms'
    | 'refusedP99Ms'
    | 'healthP50Ms'
    | 'healthP99Ms'
    | 'healthMaxMs'
    | 'createdP50Ms'
    | 'createdMaxMs'
    | 'wallP50Ms'
  >;
  /** The floor of that run (429 at p99 against a server doing nothing): how loaded it was. */
  floorRefusedP99Ms: number;
}

/**
 * The burst before the fast refusal: commit 7163e60, where every refused create authenticated,
 * looked its avatar up, counted the key's sessions in the database and then counted them twice
 * more for its headers (about 1,500 queries on the embedded database for 300 creates). Measured
 * with these benches (3 bursts each) on the 2-core machine of issue 34's work, shared with other work
 * (load average about 10): compare with a run whose floor is alike.
 */
export const BURST_BEFORE: { embedded: BurstBaseline | null; cluster: BurstBaseline | null } = {
  embedded: {
    measured: '7163e60, 2026-11-28, 2 shared cores, load average 10, client fetch',
    figures: {
      rounds: 3,
      refusedP50Ms: 4212.7,
      refusedP90Ms: 6866.6,
      refusedP99Ms: 8107.6,
      healthP50Ms: 18.0,
      healthP99Ms: 2385.9,
      healthMaxMs: 4877.1,
      createdP50Ms: 3263.7,
      createdMaxMs: 5716.3,
      wallP50Ms: 7372.5,
    },
    floorRefusedP99Ms: 1072.9,
  },
  // cluster.bench.ts: two `visage serve` nodes on one PostgreSQL server.
  cluster: {
    measured: '7163e60, 2026-11-28, 2 shared cores, load average 10, client fetch',
    figures: {
      rounds: 3,
      refusedP50Ms: 2861.6,
      refusedP90Ms: 5319.7,
      refusedP99Ms: 6734.5,
      healthP50Ms: 52.3,
      healthP99Ms: 274.7,
      healthMaxMs: 340.8,
      createdP50Ms: 2848.1,
      createdMaxMs: 5525.1,
      wallP50Ms: 3548.6,
    },
    floorRefusedP99Ms: 876.3,
  },
};
