// SPDX-License-Identifier: GPL-3.0-or-later
import { setTimeout as delay } from 'node:timers/promises';
import { ApiError } from './apiError.js';

/** How long readiness waits for the database: a probe must not hang on a stuck one. */
export const READINESS_DATABASE_MS = 1_000;

export interface ReadinessOptions {
  /** True once the node is shutting down: it takes no new sessions. */
  draining: () => boolean;
  /** The media core: sessions wait for one `starting`, and are refused by one that `failed`. */
  media?: () => 'starting' | 'ready' | 'failed';
  /** Resolves when the database answers (Store.ping). */
  ping: () => Promise<void>;
  /** Told why the database failed: the probe is unauthenticated, so its answer does not say. */
  onDatabaseError: (err: unknown) => void;
  databaseMs?: number;
}

/**
 * `GET /readyz`: the node takes new sessions (it is not draining, its media processes have
 * started) and its database answers within `databaseMs`. Unlike `/healthz` (liveness, from memory) it may wait, at most that
 * long; a load balancer's readiness probe sends new traffic elsewhere while it answers 503.
 */
export function readinessCheck(o: ReadinessOptions): () => Promise<void> {
  const limitMs = o.databaseMs ?? READINESS_DATABASE_MS;
  return async () => {
    if (o.draining()) {
      throw new ApiError(
        'media_unavailable',
        'This node is shutting down; it takes no new sessions.',
        {
          headers: { 'retry-after': '1' },
        },
      );
    }
    const media = o.media?.() ?? 'ready';
    if (media !== 'ready') {
      throw new ApiError(
        'media_unavailable',
        media === 'starting'
          ? 'The media processes are starting; a session created now waits for them.'
          : 'The media processes failed to start; this node takes no sessions.',
        { headers: media === 'starting' ? { 'retry-after': '1' } : {} },
      );
    }
    const timeout = new AbortController();
    const answered = await Promise.race([
      o.ping().then(
        () => 'ok' as const,
        (err: unknown) => err,
      ),
      delay(limitMs, 'late' as const, { signal: timeout.signal }).catch(() => 'late' as const),
    ]).finally(() => timeout.abort());
    if (answered === 'ok') return;
    if (answered !== 'late') o.onDatabaseError(answered);
    const why = answered === 'late' ? `did not answer within ${limitMs} ms` : 'failed';
    throw new ApiError('database_unavailable', `The database ${why}; retry shortly.`, {
      headers: { 'retry-after': '1' },
    });
  };
}
