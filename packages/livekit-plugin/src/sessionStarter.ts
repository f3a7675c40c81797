// SPDX-License-Identifier: Apache-2.0
import { setTimeout as sleep } from 'node:timers/promises';
import { type APIConnectOptions, intervalForRetry } from '@livekit/agents';
import type { CreateSessionRequest, CreatedSession } from '@visage-avatar/client/api';
import {
  VisageApiError,
  VisageConnectionError,
  VisageRateLimitError,
  type Concurrency,
  type VisageClient,
  type WithConcurrency,
} from '@visage-avatar/client';
import { VisageCapacityError } from './errors.js';
import { pluginLog } from './log.js';

/** Retry-After to assume when a 429 carries none (the specification's fallback). */
const FALLBACK_RETRY_AFTER_SECONDS = 5;
const CAPACITY_CODES = new Set(['concurrency_cap', 'platform_busy', 'too_many_requests']);
/**
 * How long a create is waited for, at least. A create is not safe to repeat: given up early
 * (the framework's default request timeout is 10 s) it still completes on the service, and the
 * retry made a second session whose avatar took the same identity in the same room. The service
 * answers every create within its stage bounds (30 s to save, 60 s for the media workers of a
 * node still starting them, 30 s plus 15 s to start the avatar by default), so the plugin waits
 * that long before it calls a create unanswered.
 */
export const CREATE_ANSWER_TIMEOUT_MS = 150_000;

export interface StartRetryPolicy {
  /** Total time a refused creation (429) may keep being retried after its Retry-After. */
  maxCapacityWaitSeconds: number;
  /** Retries of unanswered requests and 5xx answers (`maxRetry`, `retryIntervalMs`). */
  connOptions: APIConnectOptions;
  signal?: AbortSignal;
}

/**
 * Creates a Visage session. A `429` is retried after its Retry-After as long as the total wait
 * stays within `maxCapacityWaitSeconds`, then raised as a {@link VisageCapacityError} that
 * states the key's cap. Connection failures and 5xx are retried `connOptions.maxRetry` times;
 * an unanswered create only after {@link CREATE_ANSWER_TIMEOUT_MS} (or `connOptions.timeoutMs`).
 * Anything else (a bad key, an unknown avatar or voice) is raised at once, typed by the client.
 */
export async function createSessionWithRetry(
  client: VisageClient,
  request: CreateSessionRequest,
  policy: StartRetryPolicy,
): Promise<WithConcurrency<CreatedSession>> {
  const started = Date.now();
  let attempts = 0;
  let transientFailures = 0;
  for (;;) {
    policy.signal?.throwIfAborted();
    attempts++;
    try {
      return await client.sessions.create(request, {
        signal: policy.signal,
        timeoutMs: Math.max(policy.connOptions.timeoutMs, CREATE_ANSWER_TIMEOUT_MS),
      });
    } catch (err) {
      policy.signal?.throwIfAborted();
      if (err instanceof VisageRateLimitError && CAPACITY_CODES.has(err.code)) {
        const wait = err.retryAfterSeconds ?? FALLBACK_RETRY_AFTER_SECONDS;
        const waited = (Date.now() - started) / 1000;
        if (waited + wait > policy.maxCapacityWaitSeconds) {
          throw new VisageCapacityError(err, attempts, waited);
        }
        pluginLog().warn(
          { code: err.code, ...capFields(err.concurrency), retry_after_s: wait, attempt: attempts },
          'Visage is at capacity; retrying the session after Retry-After',
        );
        // An abort fails the wait with its own reason (aclose's), not timers/promises' AbortError.
        await sleep(wait * 1000, undefined, { signal: policy.signal }).catch(() =>
          policy.signal!.throwIfAborted(),
        );
        continue;
      }
      const transient =
        err instanceof VisageConnectionError ||
        (err instanceof VisageApiError && err.status >= 500);
      if (!transient || transientFailures >= policy.connOptions.maxRetry) throw err;
      const interval = intervalForRetry(policy.connOptions, transientFailures);
      transientFailures++;
      pluginLog().warn(
        { err: String(err), attempt: attempts, retry_in_ms: interval },
        'creating the Visage session failed; retrying',
      );
      await sleep(interval, undefined, { signal: policy.signal }).catch(() =>
        policy.signal!.throwIfAborted(),
      );
    }
  }
}

function capFields(c: Concurrency | undefined) {
  return c ? { active: c.active, cap: c.max } : {};
}
