// SPDX-License-Identifier: GPL-3.0-or-later
import { randomBytes } from 'node:crypto';
import { getAvatar } from './avatars.js';
import type { Database, Executor } from './database.js';
import { findKeyBySecret, insertKey } from './keys.js';
import { checkAndInsert, type NewSession } from './sessions.js';
import { getVoice } from './voices.js';

/**
 * The embedded database's warm-up: a create's statements (the key's lookup, the avatar's and the
 * voice's, the check-and-insert that admits one create and the one that refuses the next), run
 * `rounds` times right after the start, each round in a transaction that is rolled back, so that
 * nothing of it stays.
 *
 * Why: PGlite is PostgreSQL compiled to WebAssembly, and V8 first runs WebAssembly from a quick
 * baseline compile, then recompiles each function on its own threads once it has run enough
 * ("dynamic tiering"). On a fresh node that recompiling happened during the first burst of
 * creates, on the same cores as the refusals. With the same statements run at the start, the
 * API process's CPU in that burst halves and its refusals' p99 falls from 1.2 to 3.5 times what a
 * server doing nothing takes to 1.4 to 2.4 times; `/readyz` answers about 1 s later, since the
 * rounds take CPU the media processes' start wanted
 * (bench/results/2026-12-01-cold-burst-warm-up.md). Compiling PGlite eagerly instead
 * (`--no-wasm-dynamic-tiering`) did as much for the burst but cost 1.7 to 3 CPU-s more at every
 * start, in every command that opens the database.
 *
 * Each round is one transaction taken `idle` (database.ts): it runs only when no request's
 * statement waits, and never holds the API's event loop, so a request that comes meanwhile waits
 * for one round at most (a few ms). The node is ready without waiting for it.
 */

export interface WarmUpOptions {
  /** Rounds of a create's statements (default WARM_UP_ROUNDS). */
  rounds?: number;
  /** The node whose capacity the check-and-insert counts (any id: nothing is kept). */
  nodeId: string;
  /** Stops between rounds once true (the node is closing, or creates came: they warm it now). */
  stop?: () => boolean;
}

/** Enough rounds for the statements' hot functions to be recompiled (about 1 s of one thread). */
export const WARM_UP_ROUNDS = 300;

/** How many rounds ran and how long they took, ms. */
export interface WarmedUp {
  rounds: number;
  ms: number;
}

/** Rolls a round back: thrown out of its transaction once its statements have run. */
class RoundDone extends Error {}

/** Runs the warm-up; on the embedded database only (a PostgreSQL server is not this process). */
export async function warmUp(db: Database, o: WarmUpOptions): Promise<WarmedUp> {
  const rounds = db.kind === 'embedded' ? (o.rounds ?? WARM_UP_ROUNDS) : 0;
  const started = performance.now();
  let done = 0;
  for (; done < rounds && !o.stop?.(); done++) {
    try {
      await db.transaction(
        async (tx) => {
          await round(tx, o.nodeId);
          throw new RoundDone();
        },
        { idle: true },
      );
    } catch (err) {
      if (!(err instanceof RoundDone)) throw err;
    }
  }
  return { rounds: done, ms: performance.now() - started };
}

/** A create's statements: one admitted, the next refused by the key's cap (1). */
async function round(tx: Executor, nodeId: string): Promise<void> {
  const suffix = randomBytes(9).toString('base64url');
  const secret = `sk_warm_up_${suffix}`;
  const key = await insertKey(tx, { id: `key_warm_up_${suffix}`, name: 'warm-up', secret, cap: 1 });
  await findKeyBySecret(tx, secret, true);
  await getAvatar(tx, key.id, `avt_warm_up_${suffix}`);
  await getVoice(tx, key.id, `voice_warm_up_${suffix}`);
  for (const n of [1, 2]) {
    const session: NewSession = {
      id: `ses_warm_up_${suffix}_${n}`,
      keyId: key.id,
      avatarId: `avt_warm_up_${suffix}`,
      voiceId: `voice_warm_up_${suffix}`,
      mode: 'video',
      transport: 'livekit',
      livekitUrl: 'ws://warm-up.invalid',
      roomName: `warm_up_${suffix}`,
      agentIdentity: `avatar_warm_up_${n}`,
      publishOnBehalf: null,
      callerLiveKit: false,
      idleTimeoutSeconds: 60,
      maxDurationSeconds: 60,
    };
    const answer = await checkAndInsert(tx, session, nodeId, 2);
    // The statements as a create runs them: the first admitted, the second refused by the cap.
    const expected = n === 1 ? 'admitted' : 'concurrency_cap';
    const got = 'refused' in answer ? answer.refused : 'admitted';
    if (got !== expected) throw new Error(`the warm-up's create ${n} was ${got}, not ${expected}`);
  }
}
