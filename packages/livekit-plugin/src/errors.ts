// SPDX-License-Identifier: Apache-2.0
import { VisageError, type VisageRateLimitError } from '@visage-avatar/client';

/**
 * Misuse or a state the plugin cannot work in: a missing API key, a room that is not connected
 * yet, an option combination that makes no sense. API failures keep the client's typed errors
 * (`VisageAuthenticationError`, `VisageNotFoundError`, …).
 */
export class VisageException extends VisageError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'VisageException';
  }
}

/**
 * Visage kept refusing the session with `429` (`concurrency_cap`, `platform_busy`) for longer
 * than `maxCapacityWaitSeconds`. The message states the key's cap as the service reported it.
 */
export class VisageCapacityError extends VisageException {
  /** `concurrency_cap` (this key) or `platform_busy` (the whole platform). */
  readonly code: string;
  /** The key's cap from `x-service-max-concurrent-sessions`, when the service sent it. */
  readonly cap: number | undefined;
  /** The key's live sessions from `x-service-concurrent-sessions`, when the service sent it. */
  readonly active: number | undefined;
  readonly attempts: number;
  readonly waitedSeconds: number;
  /** The service's last Retry-After. */
  readonly retryAfterSeconds: number | undefined;

  constructor(last: VisageRateLimitError, attempts: number, waitedSeconds: number) {
    const cap = finite(last.concurrency?.max);
    const active = finite(last.concurrency?.active);
    const tried = `gave up after ${attempts} attempt${attempts === 1 ? '' : 's'} over ${Math.round(waitedSeconds)} s`;
    const message =
      last.code === 'concurrency_cap'
        ? `Visage refused the session: this key is at its cap of ${cap ?? 'unknown'} concurrent ` +
          `${cap === 1 ? 'session' : 'sessions'} (${active ?? 'unknown'} live); ${tried}. End a ` +
          'session that is no longer needed, or ask for a higher cap.'
        : `Visage refused the session (${last.code}): ${last.message}; ${tried}.`;
    super(message, { cause: last });
    this.name = 'VisageCapacityError';
    this.code = last.code;
    this.cap = cap;
    this.active = active;
    this.attempts = attempts;
    this.waitedSeconds = waitedSeconds;
    this.retryAfterSeconds = last.retryAfterSeconds;
  }
}

function finite(n: number | undefined): number | undefined {
  return n !== undefined && Number.isFinite(n) ? n : undefined;
}
