// SPDX-License-Identifier: GPL-3.0-or-later
/**
 * What the API's thread and the embedded database's thread (databaseThread.ts) say to each
 * other: one task per message, through ThreadPool (`{ id, task }` in, `{ id, result }` or
 * `{ id, error }` back). Parameters and rows cross by structured clone: a Date stays a Date, a
 * Buffer arrives as a Uint8Array (PGlite takes and gives bytea as Uint8Array).
 */
export type DatabaseTask =
  /** Resolves once PGlite has opened the data directory (the thread's first task). */
  | { op: 'open' }
  | { op: 'query'; sql: string; params: unknown[] }
  | { op: 'exec'; sql: string }
  /**
   * BEGIN, then the statements the API's thread sends through the transaction channel
   * (transactionChannel.ts) until its `end`: COMMIT or ROLLBACK. Resolves when it has ended.
   * `from`: the channel's count of requests before the transaction's first.
   */
  | { op: 'transaction'; from: number }
  | { op: 'close' };

export type DatabaseTaskResult = { rows: unknown[] } | undefined;

/** What the thread is started with (`workerData`). */
export interface DatabaseThreadData {
  /** The data directory PGlite opens. */
  path: string;
  /**
   * It was copied from a template just now: if PGlite cannot open it (a template from another
   * PGlite), the thread removes it and lets PGlite make a new one, as a first start does.
   */
  fromTemplate: boolean;
  /** The transaction channel's shared memory (TransactionChannel). */
  channel: SharedArrayBuffer;
  /** PGlite's WebAssembly, compiled once per process (9 MB: a compile per thread cost seconds). */
  pgliteWasmModule: WebAssembly.Module;
}

/**
 * An error as it crosses the thread: structured clone keeps an Error's message but drops the
 * fields PostgreSQL's errors carry (`code` above all: unique violations, connection failures), so
 * they travel beside it, as plain strings and numbers.
 */
export interface DatabaseThreadError {
  name: string;
  message: string;
  /** PostgreSQL's error fields present on the error (code, detail, constraint, table...). */
  fields: Record<string, string | number>;
}

/** PostgreSQL's error fields, as PGlite's DatabaseError (and node-postgres') names them. */
export const POSTGRES_ERROR_FIELDS = [
  'code',
  'severity',
  'detail',
  'hint',
  'position',
  'internalPosition',
  'internalQuery',
  'where',
  'schema',
  'table',
  'column',
  'dataType',
  'constraint',
  'file',
  'line',
  'routine',
] as const;

/** The error `err` thrown in the thread, in a shape that crosses it whole. */
export function toThreadError(err: unknown): DatabaseThreadError {
  if (!(err instanceof Error)) return { name: 'Error', message: String(err), fields: {} };
  const fields: Record<string, string | number> = {};
  for (const name of POSTGRES_ERROR_FIELDS) {
    const value = (err as unknown as Record<string, unknown>)[name];
    if (typeof value === 'string' || typeof value === 'number') fields[name] = value;
  }
  return { name: err.name, message: err.message, fields };
}

/** The thread's error as an Error on this side, with its PostgreSQL fields on it. */
export function fromThreadError(error: DatabaseThreadError): Error {
  const err = new Error(error.message);
  err.name = error.name;
  return Object.assign(err, error.fields);
}
