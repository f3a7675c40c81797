// SPDX-License-Identifier: Apache-2.0
import type { ErrorEnvelope } from './api/index.js';

/** Concurrency figures from the `x-service-…` headers of session endpoints. */
export interface Concurrency {
  /** Sessions of this key that are live now (parked ones included). */
  active: number;
  /** The key's cap. Read it from here: never hard-code it. */
  max: number;
}

/** Base class of everything the client throws. */
export class VisageError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'VisageError';
  }
}

/** The server answered with an error envelope. */
export class VisageApiError extends VisageError {
  readonly status: number;
  readonly type: string;
  readonly code: string;
  readonly requestId: string | undefined;
  readonly param: string | undefined;
  readonly retryAfterSeconds: number | undefined;
  readonly concurrency: Concurrency | undefined;

  constructor(
    status: number,
    envelope: ErrorEnvelope['error'] | undefined,
    headers: Headers,
    fallbackMessage: string,
  ) {
    super(envelope?.message ?? fallbackMessage);
    this.name = 'VisageApiError';
    this.status = status;
    this.type = envelope?.type ?? 'api_error';
    this.code = envelope?.code ?? 'internal';
    this.requestId = envelope?.request_id ?? headers.get('x-request-id') ?? undefined;
    this.param = envelope?.param;
    const retryAfter = Number(headers.get('retry-after') ?? NaN);
    this.retryAfterSeconds = Number.isFinite(retryAfter) ? retryAfter : undefined;
    this.concurrency = concurrencyFrom(headers);
  }
}

export class VisageAuthenticationError extends VisageApiError {
  override readonly name = 'VisageAuthenticationError';
}
export class VisageNotFoundError extends VisageApiError {
  override readonly name = 'VisageNotFoundError';
}
export class VisageConflictError extends VisageApiError {
  override readonly name = 'VisageConflictError';
}
/** 429: `concurrency_cap`, `platform_busy` or `too_many_requests`, after the client's retries. */
export class VisageRateLimitError extends VisageApiError {
  override readonly name = 'VisageRateLimitError';
}

/** The request never got an answer: connection refused, reset, DNS, or the timeout. */
export class VisageConnectionError extends VisageError {
  override readonly name = 'VisageConnectionError';
}

export function apiErrorFor(
  status: number,
  envelope: ErrorEnvelope['error'] | undefined,
  headers: Headers,
): VisageApiError {
  const location = headers.get('location');
  // Redirects are not followed, so that the key is never sent to another address.
  const fallback =
    status >= 300 && status < 400 && location
      ? `Visage answered HTTP ${status}, a redirect to ${location}: set baseUrl to the service's own address (redirects are not followed, so that the key goes nowhere else)`
      : `Visage answered HTTP ${status}`;
  const Kind =
    status === 401
      ? VisageAuthenticationError
      : status === 404
        ? VisageNotFoundError
        : status === 409
          ? VisageConflictError
          : status === 429
            ? VisageRateLimitError
            : VisageApiError;
  return new Kind(status, envelope, headers, fallback);
}

export function concurrencyFrom(headers: Headers): Concurrency | undefined {
  const active = headers.get('x-service-concurrent-sessions');
  const max = headers.get('x-service-max-concurrent-sessions');
  if (active === null || max === null) return undefined;
  return { active: Number(active), max: Number(max) };
}
