/**
 * The database could not be reached (refused, reset, timed out, shutting down). Requests that
 * need it answer 503 `database_unavailable`; the pool reconnects by itself once it is back.
 */
export class DatabaseUnavailableError extends Error {
  constructor(cause: unknown) {
    super('the database is unreachable', { cause });
    this.name = 'DatabaseUnavailableError';
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
