// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * pg-pool's words when a query waited its whole connect timeout for a pooled connection to come
 * free (a server that does not answer a new connection reads "Connection terminated due to
 * connection timeout" instead).
 */
const POOL_WAIT_TIMEOUT = /timeout exceeded when trying to connect/i;

/**
 * The database could not be used: unreachable (refused, reset, timed out, shutting down), or
 * busy (every pooled connection in use for as long as a query may wait). Requests that need it
 * answer 503 `database_unavailable`, saying which; the pool reconnects by itself once the server
 * is back.
 */
export class DatabaseUnavailableError extends Error {
  readonly reason: 'unreachable' | 'busy';

  constructor(cause: unknown) {
    const busy = cause instanceof Error && POOL_WAIT_TIMEOUT.test(cause.message);
    super(
      busy
        ? 'the database is busy: no pooled connection came free in time'
        : 'the database is unreachable',
      { cause },
    );
    this.name = 'DatabaseUnavailableError';
    this.reason = busy ? 'busy' : 'unreachable';
  }
}

/** Socket-level failures and PostgreSQL's connection-exception and shutdown SQLSTATEs. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

export function isConnectionFailure(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (NETWORK_CODES.has(code)) return true;
    // 08xxx connection exception; 57P01-57P03 admin/crash shutdown, cannot connect now.
    if (code.startsWith('08') || /^57P0[1-3]$/.test(code)) return true;
  }
  return /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error/i.test(
    err.message,
  );
}
